// Once-only execution by eventId for effects that are not idempotent by themselves (a counter, an
// e-mail). Delivery is at-least-once, so the same event can arrive twice (a publish retried, the
// relay re-publishing, a rebalance before a commit).
// A claim is taken with SET NX as `pending` with a lease, and becomes `done` (kept for `ttlMs`)
// when the effect succeeded; a failed effect releases the claim. A claim left `pending` by a
// process that died expires after the lease, and the event is retried through the retry topic.
import type { Redis } from '../../services/core/db/redis.ts';

export class EventInFlightError extends Error {
  constructor(eventId: string) {
    super(`event ${eventId} is being handled elsewhere (or its handler died); retry later`);
  }
}

export class EventDeduper {
  private readonly redis: Redis;
  private readonly scope: string;
  readonly ttlMs: number;
  readonly leaseMs: number;

  constructor(redis: Redis, scope: string, opts: { ttlMs?: number; leaseMs?: number } = {}) {
    this.redis = redis;
    this.scope = scope;
    this.ttlMs = opts.ttlMs ?? 7 * 24 * 3600_000;
    this.leaseMs = opts.leaseMs ?? 60_000;
  }

  private key(eventId: string): string {
    return `dedup:${this.scope}:${eventId}`;
  }

  /**
   * Runs `effect` unless this event already had it. Returns false when it was skipped as a duplicate.
   * Throws EventInFlightError when another attempt holds the claim (the runtime retries later).
   */
  async once(eventId: string, effect: () => Promise<void>): Promise<boolean> {
    const key = this.key(eventId);
    const claimed = await this.redis.set(key, 'pending', 'PX', this.leaseMs, 'NX');
    if (claimed !== 'OK') {
      if ((await this.redis.get(key)) === 'pending') throw new EventInFlightError(eventId);
      return false;
    }
    try {
      await effect();
    } catch (err) {
      await this.redis.del(key);
      throw err;
    }
    await this.redis.set(key, 'done', 'PX', this.ttlMs);
    return true;
  }

  /** True when the event's effect is recorded as done. */
  async seen(eventId: string): Promise<boolean> {
    return (await this.redis.get(this.key(eventId))) === 'done';
  }
}
