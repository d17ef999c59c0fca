// Inserts of concurrent callers into one collection leave in one `insertMany` (unordered): one
// command, one commit on the server, instead of one each. Each caller learns its own document's
// outcome: a duplicate key fails that caller alone, as its own insertOne would have.
import type { Collection, Document, OptionalUnlessRequiredId } from 'mongodb';
import { Coalescer } from '../events/coalesce.ts';

interface WriteFailure {
  index: number;
  code?: number;
  errmsg?: string;
}

interface Pending<T> {
  doc: T;
  error?: unknown;
}

export class BatchedInsert<T extends Document> {
  private readonly batches: Coalescer<Pending<T>>;

  constructor(coll: Collection<T>) {
    this.batches = new Coalescer(async (items) => {
      try {
        await coll.insertMany(
          items.map((i) => i.doc as OptionalUnlessRequiredId<T>),
          { ordered: false },
        );
      } catch (err) {
        const writeErrors = (err as { writeErrors?: WriteFailure[] | WriteFailure }).writeErrors;
        // Not a per-document failure (the server or the connection): every caller gets it.
        if (!writeErrors) throw err;
        for (const e of Array.isArray(writeErrors) ? writeErrors : [writeErrors]) {
          const item = items[e.index];
          if (item) item.error = Object.assign(new Error(e.errmsg ?? 'insert failed'), { code: e.code });
        }
      }
    });
  }

  /** Inserts `doc` with the inserts waiting alongside it; throws what its own insert would have. */
  async insertOne(doc: T): Promise<void> {
    const item: Pending<T> = { doc };
    await this.batches.add([item]);
    if (item.error !== undefined) throw item.error;
  }
}
