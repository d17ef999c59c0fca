// The statuses this process has just posted, as it stored them, for the consumers that read a new
// status right after its StatusCreated event (fan-out, link previews, search index): in the `all`
// role they run in the process that posted, and find it here instead of asking MongoDB again.
// A write to one of them through this process drops it (db/docCache.ts processCopies). A write by
// another process within the few seconds a copy is kept is not seen: the consumer then acts on
// the status as it was posted, as it would have had it handled the event before that write, and
// the write's own event follows.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { processCopies } from '../db/docCache.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';

const KEPT_MS = 10_000;

const posted = (core: Core) => processCopies<StatusDoc>(core.db, statuses.name, 'posted', KEPT_MS);

/** Keeps a status this process has stored (before its event can reach a consumer). */
export function keepPosted(core: Core, status: StatusDoc): void {
  posted(core).set(status._id, status);
}

/** The statuses of `ids` that exist: the ones just posted by this process from memory, the rest in one read. */
export async function newStatuses(core: Core, ids: readonly Id[]): Promise<StatusDoc[]> {
  const kept = posted(core);
  const found: StatusDoc[] = [];
  const missing: Id[] = [];
  for (const id of new Set(ids)) {
    const doc = kept.get(id);
    if (doc) found.push(doc);
    else missing.push(id);
  }
  if (missing.length > 0)
    found.push(
      ...(await collection(core.db, statuses)
        .find({ _id: { $in: missing } })
        .toArray()),
    );
  return found;
}
