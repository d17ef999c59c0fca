// Remote collections kept here (Mastodon 4.6 ProcessFeaturedCollectionService, ProcessFeaturedItem-
// Service, VerifyFeaturedItemService): a FeaturedCollection from its curator's server, whose id is on
// the curator's host, stored with its items. A remote featured account counts once its
// FeatureAuthorization stamp, fetched from that account's host (SSRF-safe client), names the
// collection; a local one only when it consented before (our Accept of the FeatureRequest).
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import {
  collectionItems,
  featuredCollections,
  type CollectionItemDoc,
  type FeaturedCollectionDoc,
} from '../model/featuredCollections.ts';
import { asArray, idOf, obj, str, typeIs, type JsonObject } from '../activitypub/json.ts';
import { hostOf } from '../activitypub/uris.ts';
import { plainText } from '../activitypub/sanitize.ts';
import { fetchDocument, isFetchProblem } from '../activitypub/fetchDocument.ts';
import { resolveActor } from '../activitypub/actors.ts';

/** Items read of a remote collection (Mastodon's ITEMS_LIMIT). */
export const REMOTE_ITEMS_MAX = 150;
/** Collections read of a remote account's `featuredCollections` (Mastodon's MAX_ITEMS). */
export const REMOTE_COLLECTIONS_MAX = 50;
const NAME_HARD_LIMIT = 256;
const DESCRIPTION_HARD_LIMIT = 2048;

/** The curator's collection from its JSON, stored or refreshed; null when it is not the actor's. */
export async function upsertRemoteCollection(
  core: Core,
  curator: AccountDoc,
  json: JsonObject,
): Promise<FeaturedCollectionDoc | null> {
  const uri = typeof json.id === 'string' ? json.id : null;
  if (!uri || !typeIs(json, 'FeaturedCollection') || curator.domain === null) return null;
  if (hostOf(uri) !== hostOf(curator.uri) || idOf(json.attributedTo) !== curator.uri) return null;
  const summaryMap = obj(json.summaryMap);
  const language = summaryMap ? (Object.keys(summaryMap)[0] ?? null) : null;
  const summary = (language && summaryMap ? str(summaryMap[language]) : null) ?? str(json.summary) ?? '';
  const topic = obj(json.topic);
  const tagName = topic ? plainText(topic.name, 100).replace(/^#/, '') || null : null;
  const url = str(json.url, 2048);
  const fields = {
    name: plainText(json.name, NAME_HARD_LIMIT),
    // Mastodon keeps the summary's HTML; the entity here carries plain text, as local ones do.
    description: plainText(summary.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' '), DESCRIPTION_HARD_LIMIT),
    language: language ? language.slice(0, 16) : null,
    sensitive: json.sensitive === true,
    discoverable: json.discoverable !== false,
    tagName,
    url: url && hostOf(url) ? url : null,
    updatedAt: new Date(),
  };
  const coll = collection(core.db, featuredCollections);
  let doc = await coll.findOne({ uri, accountId: curator._id });
  if (doc) {
    await coll.updateOne({ _id: doc._id }, { $set: fields });
    doc = { ...doc, ...fields };
  } else {
    // A curator's server cannot grow its collections here past what a fetch of them would read.
    if ((await coll.countDocuments({ accountId: curator._id })) >= REMOTE_COLLECTIONS_MAX) return null;
    doc = {
      _id: await nextSerialId(core.db, 'collections'),
      accountId: curator._id,
      uri,
      createdAt: new Date(),
      ...fields,
    };
    await coll.insertOne(doc);
  }
  await syncItems(core, doc, asArray(json.orderedItems ?? json.items).slice(0, REMOTE_ITEMS_MAX));
  return doc;
}

/** The collection's items as listed: new ones verified and added, unlisted ones dropped. */
async function syncItems(core: Core, doc: FeaturedCollectionDoc, listed: unknown[]): Promise<void> {
  const seen: string[] = [];
  for (const entry of listed) {
    let item = obj(entry);
    const id = idOf(entry);
    if (!id || hostOf(id) !== hostOf(doc.uri ?? '')) continue;
    seen.push(id);
    if (!item) item = await fetchQuietly(core, id);
    if (item) await processRemoteItem(core, doc, { ...item, id });
  }
  await collection(core.db, collectionItems).deleteMany({
    collectionId: doc._id,
    uri: { $nin: seen },
    // Local accounts' consent given before the collection listed them stays until it is listed.
    $or: [{ uri: { $ne: null } }, { state: { $ne: 'accepted' } }],
  });
}

async function fetchQuietly(core: Core, uri: string): Promise<JsonObject | null> {
  try {
    return await fetchDocument(core, uri);
  } catch (err) {
    if (!isFetchProblem(err)) throw err;
    core.logger.info({ err, uri }, 'collections: a remote document could not be fetched');
    return null;
  }
}

/** One FeaturedItem of a remote collection (its id already checked against the collection's host). */
export async function processRemoteItem(
  core: Core,
  doc: FeaturedCollectionDoc,
  json: JsonObject,
): Promise<CollectionItemDoc | null> {
  const uri = String(json.id);
  const actorUri = idOf(json.featuredObject);
  const approvalUri = idOf(json.featureAuthorization);
  if (!typeIs(json, 'FeaturedItem') || !actorUri) return null;
  // Accounts met in a collection do not have their own collections read (no crawl).
  const featured = await resolveActor(core, actorUri, { collections: false });
  if (!featured || featured.suspendedAt) return null;
  const items = collection(core.db, collectionItems);
  const existing =
    (await items.findOne({ collectionId: doc._id, uri })) ??
    (await items.findOne({ collectionId: doc._id, accountId: featured._id }));
  let state: CollectionItemDoc['state'];
  if (featured.domain === null) {
    // Our own account: only the consent it gave (the accepted FeatureRequest) counts.
    state = existing?.state === 'accepted' ? 'accepted' : 'pending';
  } else if (featured._id === doc.accountId) {
    state = 'accepted';
  } else {
    state =
      approvalUri &&
      hostOf(approvalUri) === hostOf(featured.uri) &&
      (await stampApproves(core, approvalUri, doc, featured))
        ? 'accepted'
        : 'rejected';
  }
  if (existing) {
    await items.updateOne({ _id: existing._id }, { $set: { uri, state, approvalUri: approvalUri ?? null } });
    return { ...existing, uri, state, approvalUri: approvalUri ?? null };
  }
  if ((await items.countDocuments({ collectionId: doc._id })) >= REMOTE_ITEMS_MAX) return null;
  const item: CollectionItemDoc = {
    _id: await nextSerialId(core.db, 'collection_items'),
    collectionId: doc._id,
    curatorId: doc.accountId,
    accountId: featured._id,
    state,
    createdAt: new Date(),
    uri,
    approvalUri: approvalUri ?? null,
  };
  try {
    await items.insertOne(item);
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
  }
  return item;
}

/** Whether the stamp, fetched from the featured account's host, approves featuring it in `doc`. */
async function stampApproves(
  core: Core,
  approvalUri: string,
  doc: FeaturedCollectionDoc,
  featured: AccountDoc,
): Promise<boolean> {
  const stamp = await fetchQuietly(core, approvalUri);
  return (
    stamp !== null &&
    typeIs(stamp, 'FeatureAuthorization') &&
    idOf(stamp.interactingObject) === doc.uri &&
    idOf(stamp.interactionTarget) === featured.uri
  );
}

/**
 * A remote account's collections, read from its `featuredCollections` (Mastodon's
 * FetchFeaturedCollectionsCollectionService): embedded ones stored, referenced ones fetched.
 */
export async function syncRemoteCollections(core: Core, account: AccountDoc): Promise<number> {
  if (account.domain === null || account.suspendedAt || !account.featuredCollectionsUrl) return 0;
  const list = await fetchQuietly(core, account.featuredCollectionsUrl);
  if (!list) return 0;
  let page: JsonObject | null = list;
  const first = (list.orderedItems ?? list.items) ? null : idOf(list.first);
  if (first) page = obj(list.first) ?? (await fetchPage(core, first));
  let count = 0;
  for (const entry of asArray(page?.orderedItems ?? page?.items).slice(0, REMOTE_COLLECTIONS_MAX)) {
    const id = idOf(entry);
    if (!id || hostOf(id) !== hostOf(account.uri)) continue;
    const json = obj(entry)?.type ? (entry as JsonObject) : await fetchQuietly(core, id);
    if (json && (await upsertRemoteCollection(core, account, json))) count++;
  }
  return count;
}

/** The job of a CollectionsFetchRequested event: the account's collections, if it is remote. */
export async function syncRemoteCollectionsOf(core: Core, accountId: bigint): Promise<number> {
  const account = await collection(core.db, accounts).findOne({ _id: accountId });
  return account ? syncRemoteCollections(core, account) : 0;
}

async function fetchPage(core: Core, uri: string): Promise<JsonObject | null> {
  try {
    return await fetchDocument(core, uri, { anyId: true });
  } catch (err) {
    if (!isFetchProblem(err)) throw err;
    return null;
  }
}
