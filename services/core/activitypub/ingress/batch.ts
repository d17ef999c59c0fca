// The ingress pipeline's batches: a fetched batch of verified deliveries is applied with a few
// round trips per kind of activity instead of a dozen per activity (one ingress process went from
// 11 to hundreds of activities a second this way).
// - Actors: the signers are read in one query; only unknown or stale ones are fetched.
// - Order: each remote actor's activities keep their order (the topic is keyed by actor). The
//   batch runs in rounds: round k holds the k-th activity of every actor in the batch, so no two
//   activities of one actor are ever applied together, and different actors' are (in the order of
//   separate partitions, which never had an order between them anyway).
// - Within a round, plain Creates of Notes go through `createRemoteStatuses`, Likes through
//   `favouriteRemoteLikes`, Announces of known statuses through `reblogRemoteAnnounces` and
//   Updates of Notes through `editRemoteStatuses`, Undos of Likes and Announces through
//   `bulkUndos.ts`, Follows and Undos of Follows through `bulkFollows.ts`, Deletes of statuses
//   through `bulkDeletes.ts` (bulk reads and writes); everything else is applied one by one,
//   concurrently, by the same code as a single delivery.
// - Failures stay with their activity: one that throws is reported back (the runtime sends it to
//   the retry topic) and does not sink the others; a bulk step that fails as a whole is retried
//   activity by activity before anything is reported.
// Idempotency is that of the handlers: unique `uri`s, unique favourites, the Delete marker; a
// delivery identical to the one before it from the same actor in the batch (a sender's retry) is
// not applied again.
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { domainPolicy } from '../../moderation/domainBlocks.ts';
import { resolveActor, STALE_AFTER_MS } from '../actors.ts';
import { idOf, obj, parseJsonObject, type JsonObject } from '../json.ts';
import { hostOf, isLocalUri } from '../uris.ts';
import { activitiesOf, admissible, inboxAccountOf, processActivityOf, type InboundDelivery } from './process.ts';
import { bulkCreateCandidate, createRemoteStatuses, type NewRemoteStatus } from './bulkStatuses.ts';
import { favouriteRemoteLikes, type RemoteLike } from './bulkLikes.ts';
import { reblogRemoteAnnounces, type RemoteAnnounce } from './bulkAnnounces.ts';
import { bulkUpdateCandidate, editRemoteStatuses, type RemoteEdit } from './bulkUpdates.ts';
import { bulkUndoKind, undoRemoteAnnounces, undoRemoteLikes, type RemoteUndo } from './bulkUndos.ts';
import {
  bulkFollowCandidate,
  bulkUndoFollowCandidate,
  followRemoteActors,
  unfollowRemoteActors,
  type RemoteFollow,
} from './bulkFollows.ts';
import { bulkDeleteCandidate, deleteRemoteStatuses, type RemoteDelete } from './bulkDeletes.ts';

export interface BatchFailure {
  /** Index of the delivery in the batch. */
  index: number;
  error: unknown;
}

interface Entry {
  index: number;
  delivery: InboundDelivery;
  activity: JsonObject;
  actor: AccountDoc;
  inboxAccountId: bigint | null;
}

/** The accounts of the batch's signers: one query for the known ones, a fetch for the rest. */
async function resolveSigners(core: Core, uris: string[]): Promise<Map<string, AccountDoc | null>> {
  const out = new Map<string, AccountDoc | null>();
  const remote = uris.filter((u) => hostOf(u) !== null && !isLocalUri(core.config, u));
  const known =
    remote.length > 0
      ? await collection(core.db, accounts)
          .find({ uri: { $in: remote } })
          .toArray()
      : [];
  const byUri = new Map(known.map((a) => [a.uri, a]));
  await Promise.all(
    uris.map(async (uri) => {
      const account = byUri.get(uri);
      const fresh =
        account &&
        account.domain !== null &&
        (!account.lastFetchedAt || Date.now() - account.lastFetchedAt.getTime() < STALE_AFTER_MS);
      out.set(uri, fresh ? account : await resolveActor(core, uri));
    }),
  );
  return out;
}

/**
 * Applies a batch of deliveries (in the order received). Returns the deliveries that failed with
 * an unexpected error; everything else was applied or dropped for a reason of its own.
 */
export async function processInboundBatch(core: Core, deliveries: InboundDelivery[]): Promise<BatchFailure[]> {
  const failures: BatchFailure[] = [];
  const signers = await resolveSigners(core, [...new Set(deliveries.map((d) => d.signerUri))]);
  const chains = new Map<string, Entry[]>();
  for (const [index, delivery] of deliveries.entries()) {
    const activity = parseJsonObject(delivery.activity);
    const actor = signers.get(delivery.signerUri);
    if (!activity || !actor || actor.domain === null) continue;
    if ((await domainPolicy(core, actor.domain)).rejected) continue;
    let inboxAccountId: bigint | null;
    try {
      inboxAccountId = inboxAccountOf(delivery);
    } catch (error) {
      failures.push({ index, error });
      continue;
    }
    const chain = chains.get(actor.uri) ?? [];
    // The same delivery again right after itself: a retry by the sender, already applied.
    if (chain.length > 0 && chain[chain.length - 1]!.delivery.activity === delivery.activity) continue;
    chain.push({ index, delivery, activity, actor, inboxAccountId });
    chains.set(actor.uri, chain);
  }
  const longest = Math.max(0, ...[...chains.values()].map((c) => c.length));
  for (let round = 0; round < longest; round++) {
    const entries = [...chains.values()].map((c) => c[round]).filter((e): e is Entry => e !== undefined);
    failures.push(...(await applyRound(core, entries)));
  }
  return failures;
}

async function applyOne(core: Core, entry: Entry): Promise<BatchFailure | null> {
  try {
    await processActivityOf(core, entry.actor, entry.activity, entry.inboxAccountId);
    return null;
  } catch (error) {
    return { index: entry.index, error };
  }
}

/**
 * One bulk path of a round: it collects its entries with the item each hands to `apply`, then
 * applies them together. `apply` may hand back the indexes of items not eligible after all.
 */
function bulkStep<T>(kind: string, apply: (core: Core, items: T[]) => Promise<number[] | void>) {
  const entries: Entry[] = [];
  const items: T[] = [];
  return {
    /** Takes the entry (always: true, so a candidate check can end with it). */
    add(entry: Entry, item: T): true {
      entries.push(entry);
      items.push(item);
      return true;
    },
    run: (core: Core) => bulk(core, kind, entries, () => apply(core, items)),
  };
}

function bulkSteps() {
  return {
    creates: bulkStep<NewRemoteStatus>('Create', createRemoteStatuses),
    likes: bulkStep<RemoteLike>('Like', favouriteRemoteLikes),
    announces: bulkStep<RemoteAnnounce>('Announce', reblogRemoteAnnounces),
    edits: bulkStep<RemoteEdit>('Update', editRemoteStatuses),
    undoLikes: bulkStep<RemoteUndo>('Undo Like', undoRemoteLikes),
    undoAnnounces: bulkStep<RemoteUndo>('Undo Announce', undoRemoteAnnounces),
    followings: bulkStep<RemoteFollow>('Follow', followRemoteActors),
    unfollowings: bulkStep<RemoteFollow>('Undo Follow', unfollowRemoteActors),
    deletes: bulkStep<RemoteDelete>('Delete', deleteRemoteStatuses),
  };
}

/** Puts the entry on its kind's bulk path; false when it has none (it is then applied alone). */
function addToBulkStep(core: Core, steps: ReturnType<typeof bulkSteps>, entry: Entry): boolean {
  const { activity, actor } = entry;
  const one = activitiesOf(activity);
  if (one.length !== 1 || one[0] !== activity || !admissible(actor, activity)) return false;
  switch (activity.type) {
    case 'Create': {
      const object = obj(activity.object);
      const objectId = idOf(activity.object);
      if (!object || !objectId || !bulkCreateCandidate(actor, object, objectId)) return false;
      const status = { actor, object: { ...object, id: objectId }, activity, inboxAccountId: entry.inboxAccountId };
      return steps.creates.add(entry, status);
    }
    case 'Update': {
      const object = bulkUpdateCandidate(actor, activity);
      return !!object && steps.edits.add(entry, { actor, object });
    }
    case 'Undo': {
      const kind = bulkUndoKind(actor, activity);
      if (kind) return (kind === 'Like' ? steps.undoLikes : steps.undoAnnounces).add(entry, { actor, activity });
      return bulkUndoFollowCandidate(core, actor, activity) && steps.unfollowings.add(entry, { actor, activity });
    }
    case 'Follow':
      return bulkFollowCandidate(core, activity) && steps.followings.add(entry, { actor, activity });
    case 'Delete': {
      const uri = bulkDeleteCandidate(actor, activity);
      return !!uri && steps.deletes.add(entry, { actor, uri });
    }
    case 'Announce':
      return steps.announces.add(entry, { actor, activity });
    case 'Like': {
      const objectUri = idOf(activity.object);
      return !!objectUri && steps.likes.add(entry, { actor, objectUri });
    }
    default:
      return false;
  }
}

/** Applies entries of distinct actors: bulk where a bulk path exists, the rest one by one. */
async function applyRound(core: Core, entries: Entry[]): Promise<BatchFailure[]> {
  const steps = bulkSteps();
  const singles = entries.filter((entry) => !addToBulkStep(core, steps, entry));
  const results = await Promise.all([
    ...Object.values(steps).map((step) => step.run(core)),
    ...singles.map((e) => applyOne(core, e)),
  ]);
  return results.flat().filter((f): f is BatchFailure => f !== null);
}

/**
 * Runs a bulk step; the entries it hands back (not eligible after all) and, when it fails as a
 * whole, all of its entries are applied one by one.
 */
async function bulk(
  core: Core,
  kind: string,
  entries: Entry[],
  run: () => Promise<number[] | void>,
): Promise<BatchFailure[]> {
  if (entries.length === 0) return [];
  let rest: Entry[];
  try {
    rest = ((await run()) ?? []).map((i) => entries[i]!);
  } catch (err) {
    core.logger.warn(
      { err, kind, size: entries.length },
      'ingress: bulk step failed; applying its activities one by one',
    );
    rest = entries;
  }
  const out = await Promise.all(rest.map((e) => applyOne(core, e)));
  return out.filter((f): f is BatchFailure => f !== null);
}
