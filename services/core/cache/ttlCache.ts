// The one in-process cache with a time to live, for the hot lookups every process keeps for a
// moment (renderings, apps, roles, blocks, memoised queries). A plain Map in insertion order: a
// hit costs one Map lookup and a comparison (no allocation, no timer per entry); an expired entry
// stays until it is written again or, the cache being full, dropped as the first inserted.

interface Entry<V> {
  value: V;
  until: number;
}

export class TtlCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly onEvict: ((key: K, value: V) => void) | undefined;

  /**
   * `ttlMs`: how long an entry serves; `max`: entries kept at most; `onEvict`: told of an entry
   * pushed out by a full cache (for a caller that indexes the entries another way too).
   */
  constructor(ttlMs: number, max: number, onEvict?: (key: K, value: V) => void) {
    this.ttlMs = ttlMs;
    this.max = max;
    this.onEvict = onEvict;
  }

  /** The value kept under `key` while it is younger than its time to live. */
  get(key: K, now = Date.now()): V | undefined {
    const hit = this.entries.get(key);
    return hit !== undefined && hit.until > now ? hit.value : undefined;
  }

  /** Keeps `value` under `key` for the cache's time to live (or `ttlMs`), from `now`. */
  set(key: K, value: V, now = Date.now(), ttlMs = this.ttlMs): void {
    // A kept key is updated in place: deleting and re-inserting it on every write (or dropping
    // it when read expired) left a V8 Map of thousands of hot keys full of deleted slots, and
    // every lookup slower (the api benchmark's account statuses lost a quarter of their rate).
    const kept = this.entries.get(key);
    if (kept !== undefined) {
      kept.value = value;
      kept.until = now + ttlMs;
      return;
    }
    if (this.entries.size >= this.max) {
      const [first, entry] = this.entries.entries().next().value as [K, Entry<V>];
      this.entries.delete(first);
      this.onEvict?.(first, entry.value);
    }
    this.entries.set(key, { value, until: now + ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** The keys kept, live or expired (a change to a cached thing drops every key naming it). */
  keys(): IterableIterator<K> {
    return this.entries.keys();
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * One cache per owner (a database handle: tests run several in one process), made on first use
 * and gone with the owner.
 */
export function cachePerOwner<C>(make: () => C): (owner: object) => C {
  const byOwner = new WeakMap<object, C>();
  return (owner) => {
    let cache = byOwner.get(owner);
    if (cache === undefined) byOwner.set(owner, (cache = make()));
    return cache;
  };
}
