// Many remote Deletes of statuses at once (the ingress batch's, one per actor): the same rules as
// `onDelete`/`deleteRemoteStatus` (the object on the actor's host; a quote approval it revokes
// first; only the actor's own status; an unknown one gets a marker against a late Create), with
// the lookups of the whole set in one query each, the markers in one Redis round trip and the
// deletions through `deleteStatusDocs`, the step deleteStatus itself takes. A Delete of the actor
// itself, of a quote approval or a feature authorization, or of a reblog is handed back for the
// one-by-one path.
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import type { AccountDoc } from '../../model/accounts.ts';
import { statuses, type StatusDoc } from '../../model/statuses.ts';
import { collectionItems } from '../../model/featuredCollections.ts';
import { deleteStatusDocs } from '../../statuses/deleteStatus.ts';
import { idOf, type JsonObject } from '../json.ts';
import { hostOf } from '../uris.ts';
import { markDeletedMany } from './deleteMarkers.ts';

export interface RemoteDelete {
  actor: AccountDoc;
  /** The id of the deleted object. */
  uri: string;
}

/** The object id of a Delete the bulk path takes: not of the actor itself, on the actor's host. */
export function bulkDeleteCandidate(actor: AccountDoc, activity: JsonObject): string | null {
  const uri = idOf(activity.object);
  if (!uri || uri === actor.uri || hostOf(uri) === null || hostOf(uri) !== hostOf(actor.uri)) return null;
  return uri;
}

/** Applies the Deletes of `items`; returns the indexes of the items the one-by-one path must take. */
export async function deleteRemoteStatuses(core: Core, items: RemoteDelete[]): Promise<number[]> {
  const coll = collection(core.db, statuses);
  const uris = [...new Set(items.map((d) => d.uri))];
  const [stamps, found, featureStamps] = await Promise.all([
    // Quote approvals (FEP-044f) the Deletes may revoke: those go the single way.
    coll
      .find(
        { 'quote.approvalUri': { $in: uris }, deletedAt: null },
        { projection: { 'quote.approvalUri': 1, 'quote.quotedAccountId': 1 } },
      )
      .toArray(),
    coll.find({ uri: { $in: uris }, deletedAt: null }).toArray(),
    // Collections' FeatureAuthorization stamps (Mastodon 4.6): a Delete takes the account out.
    collection(core.db, collectionItems)
      .find({ approvalUri: { $in: uris } }, { projection: { approvalUri: 1, accountId: 1 } })
      .toArray(),
  ]);
  const stamped = new Set([
    ...stamps.map((s) => `${s.quote?.quotedAccountId}:${s.quote?.approvalUri}`),
    ...featureStamps.map((s) => `${s.accountId}:${s.approvalUri}`),
  ]);
  const byUri = new Map(found.map((s) => [s.uri, s]));
  const single: number[] = [];
  const unknown: string[] = [];
  const plain = new Map<bigint, StatusDoc>();
  items.forEach((d, i) => {
    if (stamped.has(`${d.actor._id}:${d.uri}`)) return void single.push(i);
    const status = byUri.get(d.uri);
    if (!status) return void unknown.push(d.uri);
    if (status.accountId !== d.actor._id) return; // not the actor's: ignored, as one by one
    if (status.reblogOfId !== null) return void single.push(i);
    plain.set(status._id, status);
  });
  await Promise.all([markDeletedMany(core, unknown), deleteStatusDocs(core, [...plain.values()])]);
  return single;
}
