// The shared in-process TTL cache (services/core/cache/ttlCache.ts): entries serve while young,
// a kept key is rewritten in place, and a full cache drops the first inserted key.
import { TtlCache, cachePerOwner } from '../../../services/core/cache/ttlCache.ts';

test('an entry serves until its time to live has passed', () => {
  const cache = new TtlCache<string, number | null>(1000, 10);
  cache.set('a', 1, 5000);
  cache.set('n', null, 5000);
  expect(cache.get('a', 5999)).toBe(1);
  expect(cache.get('n', 5999)).toBeNull();
  expect(cache.get('missing', 5999)).toBeUndefined();
  expect(cache.get('a', 6000)).toBeUndefined();
  // Expired entries stay until rewritten (in place) or pushed out: no delete per expiry.
  expect(cache.size).toBe(2);
  cache.set('a', 2, 6000);
  expect(cache.get('a', 6999)).toBe(2);
  expect(cache.size).toBe(2);
});

test('a time to live given on set overrides the cache-wide one', () => {
  const cache = new TtlCache<string, string>(1000, 10);
  cache.set('short', 'x', 0, 10);
  expect(cache.get('short', 9)).toBe('x');
  expect(cache.get('short', 10)).toBeUndefined();
});

test('a full cache drops the first inserted key; rewriting a key keeps its place', () => {
  const cache = new TtlCache<number, string>(1000, 3);
  cache.set(1, 'one', 0);
  cache.set(2, 'two', 0);
  cache.set(3, 'three', 0);
  cache.set(1, 'uno', 0);
  expect(cache.get(1, 0)).toBe('uno');
  cache.set(4, 'four', 0);
  expect(cache.size).toBe(3);
  expect(cache.get(1, 0)).toBeUndefined();
  expect([cache.get(2, 0), cache.get(3, 0), cache.get(4, 0)]).toEqual(['two', 'three', 'four']);
  cache.delete(3);
  expect(cache.get(3, 0)).toBeUndefined();
  cache.clear();
  expect(cache.size).toBe(0);
});

test('cachePerOwner gives each owner its own cache, the same one every time', () => {
  const of = cachePerOwner(() => new TtlCache<string, number>(1000, 10));
  const a = {};
  const b = {};
  of(a).set('k', 1, 0);
  expect(of(a).get('k', 0)).toBe(1);
  expect(of(b).get('k', 0)).toBeUndefined();
  expect(of(a)).toBe(of(a));
});

test('an entry pushed out by a full cache is told to onEvict, with its value; a delete is not', () => {
  const evicted: Array<[string, number]> = [];
  const cache = new TtlCache<string, number>(1000, 2, (key, value) => evicted.push([key, value]));
  cache.set('a', 1, 0);
  cache.set('b', 2, 0);
  cache.delete('b');
  cache.set('c', 3, 0);
  expect(evicted).toEqual([]);
  cache.set('d', 4, 0);
  expect(evicted).toEqual([['a', 1]]);
});
