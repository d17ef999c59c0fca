// Liveness against MongoDB. A process that cannot reach MongoDB for long (its driver stuck after
// the server came back, its pool full of connections that never answer) serves nothing: its
// liveness check fails so that the orchestrator restarts it, as Kubernetes restarts a Mastodon
// process whose probe fails. A bounded ping through the process's own client (the pool the work
// uses, not a fresh connection) records the last contact.
// It also heals the one stuck state seen so far: the driver's (mongodb 7.9) server monitor writes
// its heartbeat to a socket the server has just closed (destroyed, its 'close' event not yet
// emitted), waits for a 'drain' that never comes, and so never checks again; the server stays
// Unknown and every operation fails server selection while MongoDB is up (a chaos run's fan-out
// process, inspected: monitor state "monitoring" for minutes, its socket destroyed with one
// 'drain' listener). When new connections have reached MongoDB for `resetAfterMs` while the
// process's own pings kept failing, the client is closed and connected again (a new monitor and pool).
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
  /**
   * When new connections (`reachable`) have answered for this long while this client's pings kept
   * failing, `reset` starts the client afresh (at most once per this period). 0 or absent: never.
   */
  resetAfterMs?: number;
  /** Whether MongoDB answers a new connection (not the process's pool). */
  reachable?: () => Promise<boolean>;
  /** Closes the process's client and connects it again. */
  reset?: () => Promise<void>;
}

export function watchMongoContact(db: Db, opts: MongoContactOptions): MongoContact {
  // Several pings per limit, so a healthy process is never older than the limit between two.
  const basis = opts.limitMs > 0 ? opts.limitMs : (opts.resetAfterMs ?? 0);
  const intervalMs = opts.intervalMs ?? Math.max(200, Math.min(5_000, basis / 4));
  const timeoutMs = opts.timeoutMs ?? Math.min(5_000, intervalMs);
  let last = Date.now();
  let inFlight = false;
  let lastReset = 0;
  /** Since when new connections have answered while this client's pings kept failing (0: not). */
  let reachableSince = 0;
  /** The process's pings fail: a stuck client is reset once new connections have answered for `resetAfterMs`. */
  const healIfStuck = async () => {
    const after = opts.resetAfterMs ?? 0;
    if (after <= 0 || !opts.reachable || !opts.reset) return;
    if (!(await opts.reachable().catch(() => false))) {
      reachableSince = 0;
      return;
    }
    const now = Date.now();
    if (reachableSince === 0) reachableSince = now;
    if (now - reachableSince < after || now - lastReset < after) return;
    lastReset = now;
    reachableSince = 0;
    await opts.reset().catch(() => undefined);
  };
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
      reachableSince = 0;
    } catch {
      // No contact: `last` stays where it was.
      clearTimeout(timer);
      await healIfStuck();
    } finally {
      clearTimeout(timer);
      inFlight = false;
    }
  };
  const timer =
    opts.limitMs > 0 || (opts.resetAfterMs ?? 0) > 0 ? setInterval(() => void ping(), intervalMs).unref() : null;
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
