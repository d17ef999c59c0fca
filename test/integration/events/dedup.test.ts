// Once-only effects by eventId against the real Redis.
import { randomUUID } from 'node:crypto';
import { connectRedis, type Redis } from '../../../services/core/db/redis.ts';
import { EventDeduper, EventInFlightError } from '../../../pipelines/runtime/dedup.ts';
import { testConfig } from '../../support/config.ts';

let redis: Redis;
let dedup: EventDeduper;

beforeAll(() => {
  redis = connectRedis(testConfig().redisUrl);
  dedup = new EventDeduper(redis, `test-${randomUUID()}`, { ttlMs: 60_000, leaseMs: 5_000 });
});

afterAll(() => redis.disconnect());

it('runs an effect once per eventId, also when deliveries race', async () => {
  let runs = 0;
  const id = randomUUID();
  const effect = async () => {
    runs++;
    await new Promise((r) => setTimeout(r, 20));
  };
  const results = await Promise.allSettled([dedup.once(id, effect), dedup.once(id, effect)]);
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
