// Once-only effects by eventId against the real Redis.
import { randomUUID } from 'node:crypto';
import { connectRedis, type Redis } from '../../../services/core/db/redis.ts';
import { EventDeduper, EventInFlightError } from '../../../pipelines/runtime/dedup.ts';
import { testConfig } from '../../support/config.ts';
import { deleteRedisNamespace } from '../../support/core.ts';

const config = testConfig();
let redis: Redis;
let dedup: EventDeduper;

beforeAll(() => {
  redis = connectRedis(config, { namespace: config.redisNamespace });
  dedup = new EventDeduper(redis, 'test', { ttlMs: 60_000, leaseMs: 5_000 });
});

afterAll(async () => {
  await deleteRedisNamespace(redis, config.redisNamespace);
  redis.disconnect();
});

it('runs an effect once per eventId, also when deliveries race', async () => {
  let runs = 0;
  const id = randomUUID();
  // The first effect holds until the other delivery has been answered (or has run the effect too).
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const effect = async () => {
    runs++;
    if (runs > 1) release();
    await released;
  };
  const deliveries = [dedup.once(id, effect), dedup.once(id, effect)];
  void Promise.race(deliveries)
    .catch(() => undefined)
    .finally(release);
  const results = await Promise.allSettled(deliveries);
  expect(runs).toBe(1);
  expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  expect(rejected.reason).toBeInstanceOf(EventInFlightError);
  expect(await dedup.once(id, effect)).toBe(false);
  expect(runs).toBe(1);
  expect(await dedup.seen(id)).toBe(true);
});

it('releases the claim when the effect fails, so a retry can run it', async () => {
  const id = randomUUID();
  await expect(dedup.once(id, async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
  expect(await dedup.seen(id)).toBe(false);
  let ran = false;
  expect(await dedup.once(id, async () => void (ran = true))).toBe(true);
  expect(ran).toBe(true);
});
