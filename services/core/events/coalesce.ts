// Many callers, few sends: items handed in while a send is in flight wait and leave together in the
// next one, so a busy process sends one Kafka request per round trip instead of one per caller
// (the producer is idempotent with one request in flight, so separate sends would queue anyway,
// each a round trip with acks=all). Every caller's promise settles with the send that carried its
// items; a quiet process sends at once (no timer, no added latency).
export class Coalescer<T> {
  private readonly send: (items: T[]) => Promise<void>;
  private readonly maxItems: number;
  private waiting: Array<{ items: T[]; resolve: () => void; reject: (err: unknown) => void }> = [];
  private inFlight = false;

  constructor(send: (items: T[]) => Promise<void>, opts: { maxItems?: number } = {}) {
    this.send = send;
    this.maxItems = opts.maxItems ?? 1_000;
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
