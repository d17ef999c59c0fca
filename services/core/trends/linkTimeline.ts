// The link timeline (Mastodon 4.3+, GET /api/v1/timelines/link): public statuses of discoverable
// authors that share a trending link.
import type { Filter } from 'mongodb';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findPage, type PageParams } from '../db/pages.ts';
import { accounts } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { previewCards, statusCards, type PreviewCardDoc } from '../model/previewCards.ts';
import { trendKeys } from './counters.ts';
import { allowedAmong } from './review.ts';

/** How many of a link's newest statuses its timeline pages through. */
const LINK_STATUSES_MAX = 2000;

/** The card of `url` if it is trending and allowed to (Mastodon's PreviewCardTrend.allowed). */
export async function trendingCard(core: Core, url: string): Promise<PreviewCardDoc | null> {
  const card = await collection(core.db, previewCards).findOne({ url });
  if (!card) return null;
  const item = String(card._id);
  const ranked = await core.redis.zscore(trendKeys.ranking('link'), item);
  if (ranked === null) return null;
  return (await allowedAmong(core, 'link', [item])).has(item) ? card : null;
}

/** The ids of the card's newest statuses (at most LINK_STATUSES_MAX), newest first. */
export async function linkedStatusIds(core: Core, card: PreviewCardDoc): Promise<Id[]> {
  const linked = await collection(core.db, statusCards)
    .find({ cardId: card._id }, { projection: { _id: 1 } })
    .sort({ _id: -1 })
    .limit(LINK_STATUSES_MAX)
    .toArray();
  return linked.map((l) => l._id);
}

/** A page of the statuses under `filter` whose authors are discoverable, newest first. */
export async function discoverableStatusIds(core: Core, filter: Filter<StatusDoc>, p: PageParams): Promise<Id[]> {
  const found = await findPage(collection(core.db, statuses), filter, p, '_id', { _id: 1, accountId: 1 });
  const authors = [...new Set(found.map((s) => s.accountId))];
  const discoverable = new Set(
    (
      await collection(core.db, accounts)
        .find({ _id: { $in: authors }, discoverable: true }, { projection: { _id: 1 } })
        .toArray()
    ).map((a) => a._id),
  );
  return found.filter((s) => discoverable.has(s.accountId)).map((s) => s._id);
}
