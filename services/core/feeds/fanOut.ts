// Who gets a new status in their home and list feeds (Mastodon's FanOutOnWriteService and
// FeedManager#filter?): the author, local followers, members' list owners and followers of its
// hashtags, minus those who block or mute the author (or a reblogged author), block its domain,
// follow without reblogs (for reblogs), or do not follow the replied-to account (for replies).
// Only active local users' home feeds are written (activity.ts): feeds.ts's insertIntoFeeds skips
// accounts without an activity marker, which remote and inactive accounts lack.
// The parts: authorSide.ts (per-status memo of the author's side), admitted.ts (the insert
// filters), fanOutWrites.ts (the feed writes), followerSlices.ts (the followers, page or slices).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { accountView } from '../model/accounts.ts';
import { readThrough } from '../db/docCache.ts';
import { admitted } from './admitted.ts';
import { rememberNoAuthorSide, type FanOutStatus } from './authorSide.ts';
import { mayBeFiltered } from './fanOutFilters.ts';
import { fanOutToLists, fanOutToTagFollowers, insertHome, type Announce, type FanOutResult } from './fanOutWrites.ts';
import { fanOutToFollowerSlice } from './followerSlices.ts';

/** Inserts a status into every feed it belongs to. */
export async function fanOutStatus(
  core: Core,
  s: FanOutStatus,
  heartbeat: () => Promise<void> = async () => {},
  announce?: Announce,
): Promise<FanOutResult> {
  // From the document cache the request's token check filled (one Redis read, not MongoDB).
  const author = (await readThrough(core, accountView, [s.accountId])).get(s.accountId);
  if (!author) return { home: [], lists: [] };
  // An author nobody blocks, mutes or lists: the filters need not ask who (ADR 0020). A reblog's
  // original author is asked about as before.
  if (s.reblogOfAccountId === null && !(await mayBeFiltered(core, author))) rememberNoAuthorSide(core, s);
  const insert = async (recipients: Id[]) =>
    insertHome(core, s, await admitted(core, s, recipients, author.domain), announce);

  if (s.visibility === 'direct') {
    return {
      home: await insert([...new Set([s.accountId, ...s.mentionedAccountIds])]),
      lists: [],
    };
  }
  // The author's own feed, the followers' and the lists' are independent: written concurrently,
  // so that the followers' streams get the status sooner.
  const own = author.domain === null ? insert([s.accountId]) : Promise.resolve([]);
  // Local followers: inline for an ordinary account; a big one's are cut into slices (see
  // fanOutToFollowerSlice), so several processes and partitions share the work.
  // A remote author's counter is its followers everywhere, not the follow records here: only a
  // local author's sizes the first cut.
  const followers = fanOutToFollowerSlice(
    core,
    s,
    null,
    author.domain,
    announce,
    author.domain === null ? author.followersCount : 0,
  );
  const lists = fanOutToLists(core, s, author.domain).then(async (reached) => {
    await announce?.({ home: [], lists: reached });
    return reached;
  });
  const [ownReached, reachedFollowers, listsReached] = await Promise.all([own, followers, lists]);
  const delivered = [...ownReached, ...reachedFollowers];
  await heartbeat();

  if (s.visibility === 'public' && s.reblogOfId === null)
    delivered.push(...(await fanOutToTagFollowers(core, s, author.domain, new Set(delivered), announce)));
  return { home: delivered, lists: listsReached };
}
