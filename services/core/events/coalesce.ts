// Many callers, few sends: items handed in while a send is in flight wait and leave together in the
// next one, so a busy process sends one Kafka request per round trip instead of one per caller
// (the producer is idempotent with one request in flight, so separate sends would queue anyway,
// each a round trip with acks=all). Every caller's promise settles with the send that carried its
// items; a quiet process sends at once (no timer, no added latency).
export class Coalescer<T> {
  private readonly send: (items: T[]) => Promise<void>;
  private readonly maxItems: number;
  private readonly lingerMs: number;
  private waiting: Array<{ items: T[]; resolve: () => void; reject: (err: unknown) => void }> = [];
  private inFlight = false;

  /**
   * `lingerMs`: a send that nobody waits on (the removal of published outbox records) first waits
   * this long for more items, so that a steady stream of posts shares it more widely.
   */
  constructor(send: (items: T[]) => Promise<void>, opts: { maxItems?: number; lingerMs?: number } = {}) {
    this.send = send;
    this.maxItems = opts.maxItems ?? 1_000;
    this.lingerMs = opts.lingerMs ?? 0;
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
