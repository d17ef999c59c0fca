// An account's collections we serve (federation reference §5): outbox, followers/following,
// featured and featured tags, as Mastodon shapes and pages them (who may see what: documents.ts).
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses } from '../model/statuses.ts';
import { follows } from '../model/follows.ts';
import { pins } from '../model/pins.ts';
import { featuredTags } from '../model/featuredTags.ts';
import { actorCollections, statusActivityUri, localBase } from './uris.ts';
import { renderStatusObject } from './render/load.ts';
import { renderCreate } from './render/activities.ts';
import { AS_CONTEXT, type JsonLd } from './render/context.ts';
import {
  renderFeaturedCollection,
  renderFeaturedTagsCollection,
  renderOrderedCollection,
  renderOrderedPage,
} from './render/collections.ts';
import {
  DocumentUnavailable,
  servedAccount,
  assertActive,
  blockedRequester,
  visibleTo,
  mayRead,
  announceOf,
} from './documents.ts';

const OUTBOX_PAGE = 20;
export interface OutboxQuery {
  page?: string;
  max_id?: string;
  min_id?: string;
}
export function idParam(value: string | undefined): bigint | null {
  return value !== undefined && /^\d{1,19}$/.test(value) ? BigInt(value) : null;
}
/** Outbox: the collection (count, first, last) or a page of Create/Announce, newest first. */
export async function outboxDocument(
  core: Core,
  username: string,
  query: OutboxQuery,
  requester: AccountDoc | null,
): Promise<JsonLd> {
  const author = await servedAccount(core, username);
  assertActive(author);
  const { outbox } = actorCollections(core.config, author.username);
  if (query.page !== 'true' && query.page !== '1') {
    const out = renderOrderedCollection(outbox, author.statusesCount, `${outbox}?page=true`);
    return { ...out, last: `${outbox}?min_id=0&page=true` };
  }
  if (await blockedRequester(core, author, requester))
    return renderOrderedPage({ id: `${outbox}?page=true`, partOf: outbox, items: [] });
  const visibilities = await visibleTo(core, author, requester);
  const maxId = idParam(query.max_id);
  const minId = idParam(query.min_id);
  const filter: Record<string, unknown> = {
    accountId: author._id,
    deletedAt: null,
    visibility: { $in: visibilities.filter((v) => v !== 'direct') },
  };
  if (maxId !== null) filter._id = { $lt: maxId };
  else if (minId !== null) filter._id = { $gt: minId };
  let page = await collection(core.db, statuses)
    .find(filter)
    .sort({ _id: minId !== null && maxId === null ? 1 : -1 })
    .limit(OUTBOX_PAGE)
    .toArray();
  if (minId !== null && maxId === null) page = page.reverse();
  const items: JsonLd[] = [];
  for (const s of page) {
    const activity =
      s.reblogOfId !== null
        ? await announceOf(core, s, author).catch(() => null)
        : renderCreate(
            await renderStatusObject(core, s, author),
            statusActivityUri(core.config, author.username, s._id),
          );
    if (!activity) continue;
    const { '@context': _c, ...item } = activity;
    void _c;
    items.push(item);
  }
  const pageId =
    maxId !== null
      ? `${outbox}?max_id=${maxId}&page=true`
      : minId !== null
        ? `${outbox}?min_id=${minId}&page=true`
        : `${outbox}?page=true`;
  return renderOrderedPage({
    id: pageId,
    partOf: outbox,
    items,
    next: page.length === OUTBOX_PAGE ? `${outbox}?max_id=${page[page.length - 1]._id}&page=true` : null,
    prev: page.length > 0 ? `${outbox}?min_id=${page[0]._id}&page=true` : null,
  });
}
const FOLLOWS_PAGE = 12;
/** Followers or following: counts only when hidden (pages then 403), else pages of actor ids. */
export async function followsDocument(
  core: Core,
  username: string,
  which: 'followers' | 'following',
  pageParam: string | undefined,
): Promise<JsonLd> {
  const owner = await servedAccount(core, username);
  assertActive(owner);
  const c = actorCollections(core.config, owner.username);
  const id = which === 'followers' ? c.followers : c.following;
  const total = which === 'followers' ? owner.followersCount : owner.followingCount;
  if (pageParam === undefined) return renderOrderedCollection(id, total, owner.hideCollections ? null : `${id}?page=1`);
  if (owner.hideCollections) throw new DocumentUnavailable(403, 'This collection is hidden');
  const page = /^\d{1,6}$/.test(pageParam) ? Math.max(1, Number(pageParam)) : 1;
  const filter = which === 'followers' ? { targetAccountId: owner._id } : { accountId: owner._id };
  const rows = await collection(core.db, follows)
    .find(filter, { projection: { accountId: 1, targetAccountId: 1 } })
    .sort({ _id: -1 })
    .skip((page - 1) * FOLLOWS_PAGE)
    .limit(FOLLOWS_PAGE)
    .toArray();
  const ids = rows.map((r) => (which === 'followers' ? r.accountId : r.targetAccountId));
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: ids } }, { projection: { uri: 1 } })
    .toArray();
  const uriById = new Map(found.map((a) => [a._id, a.uri]));
  return renderOrderedPage(
    {
      id: `${id}?page=${page}`,
      totalItems: total,
      partOf: id,
      items: ids.map((i) => uriById.get(i)).filter((u): u is string => u !== undefined),
      next: rows.length === FOLLOWS_PAGE ? `${id}?page=${page + 1}` : null,
      prev: page > 1 ? `${id}?page=${page - 1}` : null,
    },
    AS_CONTEXT,
  );
}
/** Pinned statuses: public/unlisted ones embedded, others as ids (only for readers who may see them). */
export async function featuredDocument(core: Core, username: string, requester: AccountDoc | null): Promise<JsonLd> {
  const owner = await servedAccount(core, username);
  assertActive(owner);
  const { featured } = actorCollections(core.config, owner.username);
  if (await blockedRequester(core, owner, requester)) return renderFeaturedCollection(featured, []);
  const pinned = await collection(core.db, pins).find({ accountId: owner._id }).sort({ _id: -1 }).toArray();
  const found = await collection(core.db, statuses)
    .find({ _id: { $in: pinned.map((p) => p.statusId) }, deletedAt: null })
    .toArray();
  const byId = new Map(found.map((s) => [s._id, s]));
  const items: unknown[] = [];
  for (const pin of pinned) {
    const s = byId.get(pin.statusId);
    if (!s) continue;
    if (s.visibility === 'public' || s.visibility === 'unlisted') items.push(await renderStatusObject(core, s, owner));
    else if (await mayRead(core, s, owner, requester)) items.push(s.uri);
  }
  return renderFeaturedCollection(featured, items);
}
export async function featuredTagsDocument(core: Core, username: string): Promise<JsonLd> {
  const owner = await servedAccount(core, username);
  assertActive(owner);
  const { featuredTags: id } = actorCollections(core.config, owner.username);
  const tags = await collection(core.db, featuredTags).find({ accountId: owner._id }).sort({ _id: 1 }).toArray();
  return renderFeaturedTagsCollection(
    id,
    tags.map((t) => ({
      name: t.name,
      href: `${localBase(core.config)}/@${owner.username}/tagged/${encodeURIComponent(t.nameNormalized)}`,
    })),
  );
}
