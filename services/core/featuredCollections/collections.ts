// Collections (Mastodon 4.6): a user curates named lists of accounts to recommend. Creating,
// changing and deleting them, adding and removing accounts, and a featured account revoking its
// place. An account is added only as its feature policy allows (featurePolicy.ts): a local account
// is accepted at once; a remote one whose policy allows it (automatically or manually) waits as
// `pending` while a FeatureRequest goes to its server, whose Accept or Reject settles it
// (ingress.ts). Every change records a CollectionChanged event: delivery federates it and the
// notifications pipeline tells the featured accounts.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import {
  collectionItems,
  featuredCollections,
  type CollectionItemDoc,
  type FeaturedCollectionDoc,
} from '../model/featuredCollections.ts';
import { forbidden, notFound, validationFailed, type FieldError, unprocessable } from '../errors.ts';
import { normaliseLanguage } from '../statuses/postStatus.ts';
import { findVisibleAccount, findVisibleAccounts } from '../accounts/queries.ts';
import { blockedAmong, blockersAmong } from '../graph/relations.ts';
import type { NewEvent } from '../events/outbox.ts';
import { featureApprovalsFor } from './featurePolicy.ts';
import { collectionEvent, featureRequestDelivery, featureRequestUri } from './federation.ts';

export const COLLECTION_NAME_MAX = 40;
export const COLLECTION_DESCRIPTION_MAX = 100;
/** Accounts per collection. */
export const COLLECTION_ITEMS_MAX = 25;
/** Collections per account (Mastodon's role `collection_limit`, 10 by default). */
export const COLLECTIONS_PER_ACCOUNT = 10;

export interface CollectionInput {
  name?: string;
  description?: string | null;
  language?: string | null;
  tagName?: string | null;
  sensitive?: boolean;
  discoverable?: boolean;
}

const HASHTAG = /^[\p{L}\p{M}\p{N}_·\u200c]+$/u;

type Problems = Record<string, FieldError[]>;

function tooLong(max: number): FieldError {
  return { error: 'ERR_TOO_LONG', description: `is too long (maximum is ${max} characters)` };
}

/** Checks the fields given; throws Mastodon's 422 with per-field details. */
function checkInput(input: CollectionInput, creating: boolean): void {
  const problems: Problems = {};
  const add = (field: string, p: FieldError) => (problems[field] ??= []).push(p);
  if (creating || input.name !== undefined) {
    const name = (input.name ?? '').trim();
    if (!name) add('name', { error: 'ERR_BLANK', description: "can't be blank" });
    else if ([...name].length > COLLECTION_NAME_MAX) add('name', tooLong(COLLECTION_NAME_MAX));
  }
  if (input.description && [...input.description].length > COLLECTION_DESCRIPTION_MAX)
    add('description', tooLong(COLLECTION_DESCRIPTION_MAX));
  if (input.tagName && !HASHTAG.test(input.tagName.replace(/^#/, '')))
    add('tag', { error: 'ERR_INVALID', description: 'is invalid' });
  const fields = Object.keys(problems);
  if (fields.length === 0) return;
  const label = (f: string) => f.charAt(0).toUpperCase() + f.slice(1);
  throw validationFailed(
    fields.flatMap((f) => problems[f].map((p) => `${label(f)} ${p.description}`)).join(', '),
    problems,
  );
}

function fieldsOf(input: CollectionInput): Partial<FeaturedCollectionDoc> {
  const out: Partial<FeaturedCollectionDoc> = {};
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.description !== undefined) out.description = (input.description ?? '').trim();
  if (input.language !== undefined) out.language = normaliseLanguage(input.language);
  if (input.tagName !== undefined) out.tagName = input.tagName ? input.tagName.replace(/^#/, '') : null;
  if (input.sensitive !== undefined) out.sensitive = input.sensitive;
  if (input.discoverable !== undefined) out.discoverable = input.discoverable;
  return out;
}

export async function createCollection(
  core: Core,
  owner: AccountDoc,
  input: CollectionInput & { accountIds?: Id[] },
): Promise<FeaturedCollectionDoc> {
  checkInput(input, true);
  const accountIds = [...new Set(input.accountIds ?? [])];
  if (accountIds.length > COLLECTION_ITEMS_MAX)
    throw validationFailed(`Collection items are too many (maximum is ${COLLECTION_ITEMS_MAX})`);
  const coll = collection(core.db, featuredCollections);
  if ((await coll.countDocuments({ accountId: owner._id })) >= COLLECTIONS_PER_ACCOUNT)
    throw validationFailed(`You can only have up to ${COLLECTIONS_PER_ACCOUNT} collections`);
  // Every account is checked before anything is stored, so a refused one leaves nothing behind.
  const targets: Featurable[] = [];
  for (const id of accountIds) targets.push(await featurableAccount(core, owner, id));
  const now = new Date();
  const doc: FeaturedCollectionDoc = {
    _id: await nextSerialId(core.db, 'collections'),
    accountId: owner._id,
    name: '',
    description: '',
    language: null,
    sensitive: false,
    discoverable: true,
    tagName: null,
    ...fieldsOf(input),
    createdAt: now,
    updatedAt: now,
  };
  await core.outbox.write([collectionEvent('created', doc)], () => coll.insertOne(doc));
  for (const target of targets) await addItem(core, owner, doc, target);
  return doc;
}

export async function updateCollection(
  core: Core,
  doc: FeaturedCollectionDoc,
  input: CollectionInput,
): Promise<FeaturedCollectionDoc> {
  checkInput(input, false);
  const set = { ...fieldsOf(input), updatedAt: new Date() };
  await core.outbox.write([collectionEvent('updated', doc)], () =>
    collection(core.db, featuredCollections).updateOne({ _id: doc._id }, { $set: set }),
  );
  return { ...doc, ...set };
}

export async function deleteCollection(core: Core, doc: FeaturedCollectionDoc): Promise<void> {
  await core.outbox.write([collectionEvent('deleted', doc)], () =>
    collection(core.db, featuredCollections).deleteOne({ _id: doc._id }),
  );
  await collection(core.db, collectionItems).deleteMany({ collectionId: doc._id });
}

/** The collection when `viewer` owns it: 404 when unknown, 403 when someone else's. */
export async function ownCollection(core: Core, viewer: AccountDoc, id: Id | null): Promise<FeaturedCollectionDoc> {
  const doc = await findCollection(core, id);
  if (doc.accountId !== viewer._id) throw forbidden();
  return doc;
}

/** A collection whose curator is visible (not suspended), or 404. */
export async function findCollection(core: Core, id: Id | null): Promise<FeaturedCollectionDoc> {
  const doc = id === null ? null : await collection(core.db, featuredCollections).findOne({ _id: id });
  if (!doc || !(await findVisibleAccount(core, doc.accountId))) throw notFound();
  return doc;
}

interface Featurable {
  target: AccountDoc;
  /** accepted: a local account that consents; pending: a remote one, asked by FeatureRequest. */
  state: 'accepted' | 'pending';
}

async function featurableAccount(core: Core, owner: AccountDoc, id: Id): Promise<Featurable> {
  const target = await findVisibleAccount(core, id);
  if (!target) throw unprocessable('Account not found');
  const blocked =
    (await blockedAmong(core, owner._id, [target._id])).size > 0 ||
    (await blockersAmong(core, [target._id], owner._id)).size > 0;
  const approval = blocked ? 'denied' : (await featureApprovalsFor(core, [target], owner._id)).get(target._id);
  if (target.domain === null && approval === 'automatic') return { target, state: 'accepted' };
  if (target.domain !== null && (approval === 'automatic' || approval === 'manual'))
    return { target, state: 'pending' };
  throw unprocessable('This account cannot be featured in a collection');
}

/** Stores the item (accepted, or pending with its FeatureRequest sent) and records the change. */
async function addItem(
  core: Core,
  owner: AccountDoc,
  doc: FeaturedCollectionDoc,
  { target, state }: Featurable,
): Promise<CollectionItemDoc> {
  const _id = await nextSerialId(core.db, 'collection_items');
  const item: CollectionItemDoc = {
    _id,
    collectionId: doc._id,
    curatorId: doc.accountId,
    accountId: target._id,
    state,
    createdAt: new Date(),
    ...(state === 'pending' ? { activityUri: featureRequestUri(owner, _id) } : {}),
  };
  // A pending item is announced once accepted (ingress.ts); an accepted one now (its Add{FeaturedItem}
  // may repeat what a new collection's Add carries, which receivers take as a no-op).
  const events: NewEvent[] =
    state === 'pending'
      ? [featureRequestDelivery(core, owner, doc, item, target)]
      : [collectionEvent('item_added', doc, item)];
  try {
    await core.outbox.write(events, () => collection(core.db, collectionItems).insertOne(item));
    return item;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    const existing = await collection(core.db, collectionItems).findOne({
      collectionId: doc._id,
      accountId: target._id,
    });
    if (!existing) throw err;
    return existing;
  }
}

/** POST /api/v1/collections/:id/items: features one more account (422 when it may not be). */
export async function addCollectionItem(
  core: Core,
  owner: AccountDoc,
  doc: FeaturedCollectionDoc,
  accountId: Id | null,
): Promise<CollectionItemDoc> {
  if (accountId === null) throw unprocessable('Account not found');
  const items = collection(core.db, collectionItems);
  const existing = await items.findOne({ collectionId: doc._id, accountId });
  // An account that revoked or rejected its place is not put back by the curator.
  if (existing && existing.state !== 'accepted' && existing.state !== 'pending')
    throw unprocessable('This account cannot be featured in a collection');
  if (existing) return existing;
  if ((await items.countDocuments({ collectionId: doc._id })) >= COLLECTION_ITEMS_MAX)
    throw validationFailed(`Collection items are too many (maximum is ${COLLECTION_ITEMS_MAX})`);
  const item = await addItem(core, owner, doc, await featurableAccount(core, owner, accountId));
  await touch(core, doc);
  return item;
}

/** DELETE /api/v1/collections/:id/items/:item_id (the curator). */
export async function removeCollectionItem(core: Core, doc: FeaturedCollectionDoc, itemId: Id | null): Promise<void> {
  const item =
    itemId === null ? null : await collection(core.db, collectionItems).findOne({ _id: itemId, collectionId: doc._id });
  if (!item) throw notFound();
  await core.outbox.write([collectionEvent('item_removed', doc, item)], () =>
    collection(core.db, collectionItems).deleteOne({ _id: item._id }),
  );
  await touch(core, doc);
}

/** POST /api/v1/collections/:id/items/:item_id/revoke: the featured account takes itself out. */
export async function revokeCollectionItem(
  core: Core,
  viewer: AccountDoc,
  doc: FeaturedCollectionDoc,
  itemId: Id | null,
): Promise<void> {
  const items = collection(core.db, collectionItems);
  const item = itemId === null ? null : await items.findOne({ _id: itemId, collectionId: doc._id });
  if (!item) throw notFound();
  if (item.accountId !== viewer._id) throw forbidden();
  await core.outbox.write([collectionEvent('item_revoked', doc, item)], () =>
    items.updateOne({ _id: item._id }, { $set: { state: 'revoked' } }),
  );
  await touch(core, doc);
}

async function touch(core: Core, doc: FeaturedCollectionDoc): Promise<void> {
  await collection(core.db, featuredCollections).updateOne({ _id: doc._id }, { $set: { updatedAt: new Date() } });
}

/**
 * The items each collection shows `viewer`: the curator sees every item; anyone else only
 * accepted ones, without accounts the viewer blocks or that are suspended.
 */
export async function visibleItems(
  core: Core,
  docs: readonly FeaturedCollectionDoc[],
  viewer: Pick<AccountDoc, '_id'> | null,
): Promise<Map<Id, CollectionItemDoc[]>> {
  const all = docs.length
    ? await collection(core.db, collectionItems)
        .find({ collectionId: { $in: docs.map((d) => d._id) } })
        .sort({ _id: 1 })
        .toArray()
    : [];
  const accountIds = [...new Set(all.map((i) => i.accountId))];
  const [blocked, visible] = await Promise.all([
    viewer ? blockedAmong(core, viewer._id, accountIds) : Promise.resolve(new Set<Id>()),
    findVisibleAccounts(core, accountIds),
  ]);
  const shown = new Set(visible.map((a) => a._id));
  const owners = new Map(docs.map((d) => [d._id, d.accountId]));
  const out = new Map<Id, CollectionItemDoc[]>(docs.map((d) => [d._id, []]));
  for (const item of all) {
    if (!shown.has(item.accountId) || blocked.has(item.accountId)) continue;
    const mine = viewer !== null && owners.get(item.collectionId) === viewer._id;
    if (!mine && item.state !== 'accepted') continue;
    out.get(item.collectionId)?.push(item);
  }
  return out;
}

/** A page of the collections of, or featuring, an account (`accountId`) as `viewer` may see them. */
export interface CollectionsPage {
  accountId: Id;
  viewer: Pick<AccountDoc, '_id'> | null;
  offset: number;
  limit: number;
}

/** An account's collections, newest first: all for the curator, the discoverable ones for others. */
export async function collectionsOf(
  core: Core,
  { accountId, viewer, offset, limit }: CollectionsPage,
): Promise<FeaturedCollectionDoc[]> {
  const filter = viewer?._id === accountId ? { accountId } : { accountId, discoverable: true };
  return collection(core.db, featuredCollections).find(filter).sort({ _id: -1 }).skip(offset).limit(limit).toArray();
}

/** The collections (of others, discoverable, or the viewer's own) where the account is featured. */
export async function collectionsFeaturing(
  core: Core,
  { accountId, viewer, offset, limit }: CollectionsPage,
): Promise<FeaturedCollectionDoc[]> {
  const ids = (
    await collection(core.db, collectionItems)
      .find({ accountId, state: 'accepted' }, { projection: { collectionId: 1 } })
      .sort({ collectionId: -1 })
      .toArray()
  ).map((i) => i.collectionId);
  if (ids.length === 0) return [];
  const docs = await collection(core.db, featuredCollections)
    .find({
      _id: { $in: ids },
      $or: [{ discoverable: true }, ...(viewer ? [{ accountId: viewer._id }] : [])],
    })
    .sort({ _id: -1 })
    .skip(offset)
    .limit(limit)
    .toArray();
  const curators = new Set(
    (
      await findVisibleAccounts(
        core,
        docs.map((d) => d.accountId),
      )
    ).map((a) => a._id),
  );
  return docs.filter((d) => curators.has(d.accountId));
}
