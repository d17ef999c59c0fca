import { parseId, statusIdFloor, statusIdTimestamp, StatusIdGenerator } from '../../../services/core/ids.ts';
import type { Redis } from '../../../services/core/db/redis.ts';

describe('status id layout', () => {
  it('keeps milliseconds in the top 48 bits and a sequence in the low 16', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const floor = statusIdFloor(at);
    expect(floor).toBe(BigInt(at.getTime()) * 65536n);
    expect(statusIdTimestamp(floor)).toEqual(at);
    expect(statusIdTimestamp(floor | 0xffffn)).toEqual(at);
    expect(statusIdFloor(new Date(at.getTime() + 1)) > (floor | 0xffffn)).toBe(true);
  });

  it('fits in a signed 64-bit integer (BSON Long) for the next four thousand years', () => {
    expect(statusIdFloor(new Date('6000-12-31T23:59:59.999Z')) | 0xffffn).toBeLessThan(1n << 63n);
  });
});

/** A stand-in for the Redis SET NX and INCR the generator sends. */
function fakeRedis(counts: Map<string, number>): Redis {
  return {
    async set(k: string) {
      if (counts.has(k)) return null;
      counts.set(k, 0);
      return 'OK';
    },
    async incr(k: string) {
      const n = (counts.get(k) ?? 0) + 1;
      counts.set(k, n);
      return n;
    },
  } as unknown as Redis;
}

describe('StatusIdGenerator', () => {
  it('numbers ids within a millisecond and moves on when it is full', async () => {
    const at = new Date();
    const counts = new Map([[`ids:status:${at.getTime()}`, 0xfffd]]);
    const gen = new StatusIdGenerator(fakeRedis(counts));
    expect(await gen.next(at)).toBe(statusIdFloor(at) | 0xfffdn);
    expect(await gen.next(at)).toBe(statusIdFloor(at) | 0xfffen);
    expect(await gen.next(at)).toBe(statusIdFloor(new Date(at.getTime() + 1)));
  });

  it('takes the low bits of ids at past times from one counter, which no millisecond restarts', async () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    const counts = new Map([['ids:status:past', 65_534]]);
    const gen = new StatusIdGenerator(fakeRedis(counts));
    expect(await gen.next(at)).toBe(statusIdFloor(at) | 0xffffn);
    expect(await gen.next(at)).toBe(statusIdFloor(at));
    // Another millisecond goes on with the same counter: a post there later does not repeat an id.
    expect(await gen.next(new Date(at.getTime() + 1000))).toBe(statusIdFloor(new Date(at.getTime() + 1000)) | 1n);
  });
});

describe('parseId', () => {
  it.each([
    ['1', 1n],
    ['109876543210987654', 109876543210987654n],
    [42, 42n],
    ['9223372036854775807', 9223372036854775807n],
  ])('accepts %p', (input, expected) => expect(parseId(input)).toBe(expected));

  it.each(['0', '-1', '1.5', 'abc', '', '9223372036854775808', '123456789012345678901', null, undefined, {}])(
    'rejects %p',
    (input) => expect(parseId(input)).toBeNull(),
  );
});
