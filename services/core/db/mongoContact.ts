// Liveness against MongoDB. A process that cannot reach MongoDB for long (its driver stuck after
// the server came back, its pool full of connections that never answer) serves nothing and heals
// nothing by itself: its liveness check fails so that the orchestrator restarts it, as Kubernetes
// restarts a Mastodon process whose probe fails. A bounded ping through the process's own client
// (the pool the work uses, not a fresh connection) records the last contact.
import type { Db } from 'mongodb';

export interface MongoContact {
  /** Milliseconds since MongoDB last answered this process. */
  silentMs(): number;
  /** True once MongoDB has not answered for longer than the limit. */
  lost(): boolean;
  stop(): void;
}

export interface MongoContactOptions {
  /** After this long without an answer the process counts as lost; 0 never. */
  limitMs: number;
  intervalMs?: number;
  /** A ping that takes longer than this counts as no answer. */
  timeoutMs?: number;
}

export function watchMongoContact(db: Db, opts: MongoContactOptions): MongoContact {
  // Several pings per limit, so a healthy process is never older than the limit between two.
  const intervalMs = opts.intervalMs ?? Math.max(200, Math.min(5_000, opts.limitMs / 4));
  const timeoutMs = opts.timeoutMs ?? Math.min(5_000, intervalMs);
  let last = Date.now();
  let inFlight = false;
  const ping = async () => {
    // One ping at a time: a hung one must not pile more onto a stuck pool.
    if (inFlight) return;
    inFlight = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        db.command({ ping: 1 }),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), timeoutMs))),
      ]);
      last = Date.now();
    } catch {
      // No contact: `last` stays where it was.
    } finally {
      clearTimeout(timer);
      inFlight = false;
    }
  };
  const timer = opts.limitMs > 0 ? setInterval(() => void ping(), intervalMs).unref() : null;
  return {
    silentMs: () => Date.now() - last,
    lost: () => opts.limitMs > 0 && Date.now() - last > opts.limitMs,
    stop: () => {
      if (timer) clearInterval(timer);
    },
  };
}

/** What `/health` answers: 200 "OK", or 503 naming how long MongoDB has been out of reach. */
export function liveness(contact: MongoContact): { status: 200 | 503; body: string } {
  if (!contact.lost()) return { status: 200, body: 'OK' };
  return { status: 503, body: `MongoDB unreachable for ${Math.round(contact.silentMs() / 1000)} s` };
}
