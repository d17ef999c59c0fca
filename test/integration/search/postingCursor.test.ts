// The posting-list walk on the real Redis: intersections deep in a long list, exclusions, score
// bounds, resuming across calls, and the scan budget. The lists share a hash tag, as one scope's do.
import type { Core } from '../../../services/core/context.ts';
import { PostingCursor } from '../../../services/core/search/statusIndex.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';

let core: Core;
const T0 = Date.UTC(2026, 0, 1);
const id = (i: number) => (BigInt(T0 + i) << 16n) | 1n;

beforeAll(async () => {
  ({ core } = await createTestCore());
  // "common": 60,000 posts; "rare": the 5 oldest and every 10,000th; "not": every 20,000th.
  for (let from = 0; from < 60_000; from += 5_000) {
    const pipe = core.redis.pipeline();
    for (let i = from; i < from + 5_000; i++) {
      pipe.zadd('{t}:common', T0 + i, String(id(i)));
      if (i < 5 || i % 10_000 === 0) pipe.zadd('{t}:rare', T0 + i, String(id(i)));
      if (i % 20_000 === 0) pipe.zadd('{t}:not', T0 + i, String(id(i)));
    }
    await pipe.exec();
  }
});

afterAll(async () => {
  await closeTestCore(core);
});

async function drain(cursor: PostingCursor, batch = 3): Promise<bigint[]> {
  const out: bigint[] = [];
  for (let next = await cursor.peek(batch); next !== null; next = await cursor.peek(batch)) {
    out.push(next);
    cursor.take();
  }
  return out;
}

const walk = (over: Partial<Parameters<typeof PostingCursor.open>[1]> = {}) => ({
  include: ['{t}:common', '{t}:rare'],
  exclude: [] as string[],
  maxScore: Number.MAX_SAFE_INTEGER,
  minScore: 0,
  ...over,
});

test('walks the intersection newest first, from the smallest list', async () => {
  const c = await PostingCursor.open(core.redis, walk({ include: ['{t}:common', '{t}:rare'] }));
  expect(await drain(c!)).toEqual([50_000, 40_000, 30_000, 20_000, 10_000, 4, 3, 2, 1, 0].map(id));
});

test('opening reads the first batch in the same call that picks the smallest list', async () => {
  const c = await PostingCursor.open(core.redis, walk({ include: ['{t}:common', '{t}:rare'] }), undefined, 4);
  // The rare list drove: its 4 newest postings were read, all of them in the common list.
  expect(c!.postingsRead).toBe(4);
  const first: bigint[] = [];
  for (let i = 0; i < 4; i++) {
    first.push((await c!.peek(4))!);
    c!.take();
  }
  expect(c!.postingsRead).toBe(4);
  expect(first).toEqual([50_000, 40_000, 30_000, 20_000].map(id));
  expect(await drain(c!, 4)).toEqual([10_000, 4, 3, 2, 1, 0].map(id));
});

test('score bounds deep in a long list, across pages and calls', async () => {
  const c = await PostingCursor.open(
    core.redis,
    walk({ include: ['{t}:common'], maxScore: T0 + 59_699, minScore: T0 + 59_399 }),
  );
  const found = await drain(c!, 100);
  expect(found).toEqual(Array.from({ length: 301 }, (_, k) => id(59_699 - k)));
});

test('the rare word drives even when listed second; exclusions and score bounds apply', async () => {
  const c = await PostingCursor.open(core.redis, walk({ include: ['{t}:rare', '{t}:common'], exclude: ['{t}:not'] }));
  expect(await drain(c!)).toEqual([50_000, 30_000, 10_000, 4, 3, 2, 1].map(id));
  const bounded = await PostingCursor.open(core.redis, walk({ maxScore: T0 + 30_000, minScore: T0 + 3 }));
  expect(await drain(bounded!)).toEqual([30_000, 20_000, 10_000, 4, 3].map(id));
});

test('a deep walk with no match ends; an empty list means no cursor; the budget stops a walk', async () => {
  // t:other: as long as t:common, sharing only its second-oldest post.
  for (let from = 0; from < 60_000; from += 5_000) {
    const pipe = core.redis.pipeline();
    for (let i = from; i < from + 5_000; i++) pipe.zadd('{t}:other', T0 + i, String(i === 1 ? id(1) : id(i) + 1n));
    await pipe.exec();
  }
  const deep = await PostingCursor.open(core.redis, walk({ include: ['{t}:common', '{t}:common'], exclude: ['{t}:common'] }));
  expect(await drain(deep!)).toEqual([]);
  expect(await PostingCursor.open(core.redis, walk({ include: ['{t}:common', '{t}:missing'] }))).toBeNull();
  const limited = await PostingCursor.open(core.redis, walk({ include: ['{t}:common', '{t}:other'] }), 25_000);
  expect(await drain(limited!)).toEqual([]);
  const full = await PostingCursor.open(core.redis, walk({ include: ['{t}:common', '{t}:other'] }));
  expect(await drain(full!)).toEqual([id(1)]);
});
