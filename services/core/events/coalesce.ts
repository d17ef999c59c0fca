// Many callers, few sends: items handed in while a send is in flight wait and leave together in the
// next one, so a busy process sends one Kafka request per round trip instead of one per caller
// (the producer is idempotent with one request in flight, so separate sends would queue anyway,
// each a round trip with acks=all). Every caller's promise settles with the send that carried its
// items; a quiet process sends at once (no timer, no added latency).
export class Coalescer<T> {
  private readonly send: (items: T[]) => Promise<void>;
  private readonly maxItems: number;
  private readonly lingerMs: number;
  private readonly sameTurn: boolean;
  private waiting: Array<{ items: T[]; resolve: () => void; reject: (err: unknown) => void }> = [];
  private inFlight = false;

  /**
   * `lingerMs`: a send that nobody waits on (the removal of published outbox records) first waits
   * this long for more items, so that a steady stream of posts shares it more widely.
   * `sameTurn`: a quiet coalescer's first send waits for the rest of the event-loop turn, so that
   * callers started together (the partition batches of one Kafka fetch) share it too.
   */
  constructor(
    send: (items: T[]) => Promise<void>,
    opts: { maxItems?: number; lingerMs?: number; sameTurn?: boolean } = {},
  ) {
    this.send = send;
    this.maxItems = opts.maxItems ?? 1_000;
    this.lingerMs = opts.lingerMs ?? 0;
    this.sameTurn = opts.sameTurn ?? false;
  }

  add(items: T[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ items, resolve, reject });
      if (!this.inFlight) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.inFlight = true;
    try {
      if (this.sameTurn) await new Promise((r) => setImmediate(r));
      while (this.waiting.length > 0) {
        if (this.lingerMs > 0) await new Promise((r) => setTimeout(r, this.lingerMs));
        const group: typeof this.waiting = [];
        let count = 0;
        while (
          this.waiting.length > 0 &&
          (group.length === 0 || count + this.waiting[0]!.items.length <= this.maxItems)
        ) {
          const next = this.waiting.shift()!;
          group.push(next);
          count += next.items.length;
        }
        try {
          await this.send(group.flatMap((g) => g.items));
          for (const g of group) g.resolve();
        } catch (err) {
          for (const g of group) g.reject(err);
        }
      }
    } finally {
      this.inFlight = false;
    }
  }
}

/**
 * A keyed read shared like a Coalescer's send: the keys of callers that arrive together (same turn,
 * or while a read is in flight) are read in one call, and each caller gets the whole answer (the
 * entries of its own keys and maybe others').
 */
export function sharedRead<K, V>(read: (keys: K[]) => Promise<Map<K, V>>): (keys: readonly K[]) => Promise<Map<K, V>> {
  type Ask = { keys: readonly K[]; answer?: Map<K, V> };
  const reads = new Coalescer<Ask>(
    async (asks) => {
      const answer = await read([...new Set(asks.flatMap((a) => a.keys))]);
      for (const a of asks) a.answer = answer;
    },
    { sameTurn: true },
  );
  return async (keys) => {
    if (keys.length === 0) return new Map();
    const ask: Ask = { keys };
    await reads.add([ask]);
    return ask.answer!;
  };
}
