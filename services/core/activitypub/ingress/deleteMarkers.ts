// Delete markers: a remote status deleted before its Create arrived (or while it was fetched) is
// remembered for a few hours by its URI, so that the late Create is refused.
import type { Core } from '../../context.ts';
import { batch } from '../../db/redis.ts';

/** How long a Delete for an unknown status refuses its late Create (Mastodon: 6 h). */
const DELETE_MARKER_SECONDS = 6 * 3600;
export function deleteMarkerKey(uri: string): string {
  return `ap:deleted:${uri}`;
}
export async function markDeleted(core: Core, uri: string): Promise<void> {
  await markDeletedMany(core, [uri]);
}
/** markDeleted for many (one round trip). */
export async function markDeletedMany(core: Core, uris: string[]): Promise<void> {
  if (uris.length === 0) return;
  const pipe = batch(core.redis);
  for (const uri of uris) pipe.set(deleteMarkerKey(uri), '1', 'EX', DELETE_MARKER_SECONDS);
  // A marker not set would let a late Create through: fail the activities, to be retried.
  const failed = (await pipe.exec())?.find(([err]) => err)?.[0];
  if (failed) throw failed;
}
