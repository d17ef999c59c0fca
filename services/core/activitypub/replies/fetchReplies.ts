// Reading remote statuses' `replies` (Mastodon's FetchRepliesService / FetchRepliesWorker and,
// when a user opens a thread, FetchAllRepliesWorker), run by the `replies` pipeline:
// - first-page: up to 5 same-host items of the first page (embedded in the job, or read from the
//   collection), each fetched and stored; each reply stored queues its own first-page job one
//   level shallower, so the walk is bounded in count (5 per status) and depth (FIRST_PAGE_DEPTH).
// - thread: the whole reply tree below a status, pages followed by `next`, bounded by
//   FETCH_REPLIES_MAX_PAGES (pages), FETCH_REPLIES_MAX_SINGLE (items per collection) and
//   FETCH_REPLIES_MAX_GLOBAL (statuses fetched). Collections and their pages must be on the host of
//   the status they belong to; the items may be anywhere (Mastodon 4.4): each one is fetched from
//   its own origin, whose document must name itself.
// Every request goes through the SSRF-safe client (fetchDocument → safeFetch).
import type { Core } from '../../context.ts';
import type { EventRecord } from '../../../../schemas/index.ts';
import { collection } from '../../db/mongo.ts';
import { accounts } from '../../model/accounts.ts';
import { statuses, type StatusDoc } from '../../model/statuses.ts';
import { domainPolicy } from '../../moderation/domainBlocks.ts';
import { fetchDocument, isFetchProblem } from '../fetchDocument.ts';
import { findStatusByUri, storeFetchedStatus } from '../ingress/statuses.ts';
import { idOf, obj, type JsonObject } from '../json.ts';
import { hostOf, isLocalUri } from '../uris.ts';
import { FIRST_PAGE_REPLIES, pageItemIds, sameHostIds } from './job.ts';
import { finishAsyncRefresh } from './asyncRefresh.ts';

export type RepliesJob = EventRecord<'RepliesFetchRequested'>;

export interface RepliesOutcome {
  /** Statuses fetched and stored (new ones). */
  fetched: number;
  /** Collection documents and pages read. */
  pages: number;
}

/** Runs one job; a refresh it carries is finished whatever happened. */
export async function runRepliesJob(core: Core, job: RepliesJob): Promise<RepliesOutcome> {
  try {
    const status = await collection(core.db, statuses).findOne({ _id: BigInt(job.statusId) });
    if (!status || status.local || status.deletedAt) return { fetched: 0, pages: 0 };
    const host = hostOf(status.uri);
    if (host === null || (await domainPolicy(core, host)).rejected) return { fetched: 0, pages: 0 };
    return job.mode === 'thread' ? await crawlThread(core, status) : await fetchFirstPage(core, status, job);
  } finally {
    if (job.refreshKey) await finishAsyncRefresh(core, job.refreshKey);
  }
}

/** Whether a status's replies may be crawled now (Mastodon's `should_fetch_replies?`). */
export function shouldFetchReplies(core: Core, status: StatusDoc, now = Date.now()): boolean {
  const c = core.config.federation.fetchReplies;
  if (status.local || status.deletedAt) return false;
  if (status.visibility !== 'public' && status.visibility !== 'unlisted') return false;
  if (status.createdAt.getTime() > now - c.initialWaitMinutes * 60_000) return false;
  const last = status.fetchedRepliesAt ?? null;
  return last === null || last.getTime() <= now - c.cooldownMinutes * 60_000;
}

async function fetchFirstPage(core: Core, status: StatusDoc, job: RepliesJob): Promise<RepliesOutcome> {
  const author = await collection(core.db, accounts).findOne({ _id: status.accountId }, { projection: { uri: 1 } });
  if (!author) return { fetched: 0, pages: 0 };
  let ids = job.items;
  let pages = 0;
  if (ids.length === 0 && job.collection) {
    const read = await readCollection(core, job.collection, status.uri, {
      maxPages: 1,
      maxItems: FIRST_PAGE_REPLIES * 4,
    });
    ids = read.items;
    pages = read.pages;
  }
  let fetched = 0;
  for (const uri of sameHostIds(ids, author.uri, FIRST_PAGE_REPLIES)) {
    if (isLocalUri(core.config, uri) || (await findStatusByUri(core, uri))) continue;
    const doc = await fetchQuietly(core, uri);
    if (!doc) continue;
    const stored = await storeFetchedStatus(core, uri, doc, { depth: 0, repliesDepth: job.depth - 1 });
    if (stored) fetched++;
  }
  return { fetched, pages };
}

async function crawlThread(core: Core, root: StatusDoc): Promise<RepliesOutcome> {
  const c = core.config.federation.fetchReplies;
  if (!shouldFetchReplies(core, root)) return { fetched: 0, pages: 0 };
  await collection(core.db, statuses).updateOne({ _id: root._id }, { $set: { fetchedRepliesAt: new Date() } });
  const rootDoc = await fetchQuietly(core, root.uri);
  if (!rootDoc) return { fetched: 0, pages: 0 };
  const queue: Array<{ uri: string; doc: JsonObject }> = [{ uri: root.uri, doc: rootDoc }];
  const seen = new Set<string>([root.uri]);
  let fetched = 0;
  let pages = 0;
  while (queue.length > 0 && fetched < c.maxGlobal && pages < c.maxPages) {
    const node = queue.shift()!;
    if (node.doc.replies === undefined || node.doc.replies === null) continue;
    const read = await readCollection(core, node.doc.replies, node.uri, {
      maxPages: c.maxPages - pages,
      maxItems: c.maxSingle,
    });
    pages += read.pages;
    for (const uri of read.items) {
      if (fetched >= c.maxGlobal) break;
      if (seen.has(uri) || !/^https?:\/\//i.test(uri) || isLocalUri(core.config, uri)) continue;
      seen.add(uri);
      const known = await findStatusByUri(core, uri);
      // A known reply is crawled further only when its own replies are due (the cooldown).
      if (known && (known.local || !shouldFetchReplies(core, known))) continue;
      const host = hostOf(uri);
      if (host === null || (await domainPolicy(core, host)).rejected) continue;
      const doc = await fetchQuietly(core, uri);
      if (!doc) continue;
      if (known) {
        await collection(core.db, statuses).updateOne({ _id: known._id }, { $set: { fetchedRepliesAt: new Date() } });
      } else {
        const stored = await storeFetchedStatus(core, uri, doc, { depth: 0, repliesDepth: 0 });
        if (!stored) continue;
        fetched++;
      }
      queue.push({ uri, doc });
    }
  }
  core.logger.debug({ status: root.uri, fetched, pages }, 'thread replies crawled');
  return { fetched, pages };
}

async function fetchQuietly(core: Core, url: string, anyId = false): Promise<JsonObject | null> {
  try {
    return await fetchDocument(core, url, anyId ? { anyId: true } : {});
  } catch (err) {
    if (!isFetchProblem(err)) throw err;
    core.logger.debug({ err, url }, 'replies: fetch failed');
    return null;
  }
}

/**
 * The item ids of a replies collection (an id or an embedded object): its `first` page, then
 * pages by `next`, while on `owner`'s host and within the limits. Pages are read without the
 * "id equals URL" rule (Mastodon's fetch_resource_without_id_validation): their items are proven
 * one by one when fetched.
 */
async function readCollection(
  core: Core,
  start: unknown,
  owner: string,
  limits: { maxPages: number; maxItems: number },
): Promise<{ items: string[]; pages: number }> {
  const host = hostOf(owner);
  const items: string[] = [];
  const visited = new Set<string>();
  let pages = 0;
  const load = async (ref: unknown): Promise<JsonObject | null> => {
    const embedded = obj(ref);
    if (
      embedded &&
      (embedded.items !== undefined || embedded.orderedItems !== undefined || embedded.first !== undefined)
    )
      return embedded;
    const url = idOf(ref);
    if (!url || hostOf(url) !== host || visited.has(url) || pages >= limits.maxPages) return null;
    visited.add(url);
    pages++;
    return fetchQuietly(core, url, true);
  };
  let page = await load(start);
  if (page && page.first !== undefined && page.items === undefined && page.orderedItems === undefined)
    page = await load(page.first);
  while (page && items.length < limits.maxItems) {
    items.push(...pageItemIds(page).slice(0, limits.maxItems - items.length));
    if (items.length >= limits.maxItems || page.next === undefined || page.next === null) break;
    page = await load(page.next);
  }
  return { items, pages };
}
