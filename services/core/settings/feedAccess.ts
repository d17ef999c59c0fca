// Who may read the public ("live") and hashtag ("topic") timelines and streams, per origin of the
// statuses: Mastodon 4.5's `local_live_feed_access`, `remote_live_feed_access`,
// `local_topic_feed_access`, `remote_topic_feed_access`, each `public` (anyone, also logged out),
// `authenticated` (a logged-in, functional user) or `disabled` (only roles with `view_feeds`).
// Defaults: public. A feed asking only for what the caller may not read is empty; a feed asking
// for both origins gets the ones the caller may read (Mastodon's PublicFeed/TagFeed).
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { recentResult } from '../db/recentResults.ts';
import { settings } from '../model/settings.ts';

export const FEED_ACCESS_VALUES = ['public', 'authenticated', 'disabled'] as const;
export type FeedAccess = (typeof FEED_ACCESS_VALUES)[number];

export const FEED_ACCESS_SETTINGS = [
  'local_live_feed_access',
  'remote_live_feed_access',
  'local_topic_feed_access',
  'remote_topic_feed_access',
] as const;
export type FeedAccessSetting = (typeof FEED_ACCESS_SETTINGS)[number];

export type FeedKind = 'live' | 'topic';

export interface FeedAccessPair {
  local: FeedAccess;
  remote: FeedAccess;
}

export function isFeedAccess(value: unknown): value is FeedAccess {
  return typeof value === 'string' && (FEED_ACCESS_VALUES as readonly string[]).includes(value);
}

export function isFeedAccessSetting(name: string): name is FeedAccessSetting {
  return (FEED_ACCESS_SETTINGS as readonly string[]).includes(name);
}

/**
 * The feed access settings, read by every public and hashtag timeline request: kept in this
 * process for FEED_ACCESS_TTL_MS (a change made through this process shows at once, one made by
 * another process, the CLI say, within that time; db/recentResults.ts). Shared: not to be changed.
 */
export async function getFeedAccess(core: Core): Promise<Readonly<Record<FeedKind, FeedAccessPair>>> {
  return recentResult(core.db, 'feedAccess', [settings], FEED_ACCESS_TTL_MS, () => readFeedAccess(core));
}

const FEED_ACCESS_TTL_MS = 2000;

async function readFeedAccess(core: Core): Promise<Record<FeedKind, FeedAccessPair>> {
  const docs = await collection(core.db, settings)
    .find({ _id: { $in: [...FEED_ACCESS_SETTINGS] } })
    .toArray();
  const value = (name: FeedAccessSetting): FeedAccess => {
    const v = docs.find((d) => d._id === name)?.value;
    return isFeedAccess(v) ? v : 'public';
  };
  return {
    live: { local: value('local_live_feed_access'), remote: value('remote_live_feed_access') },
    topic: { local: value('local_topic_feed_access'), remote: value('remote_topic_feed_access') },
  };
}

export async function setFeedAccess(core: Core, name: FeedAccessSetting, value: FeedAccess): Promise<void> {
  await collection(core.db, settings).updateOne(
    { _id: name },
    { $set: { value, updatedAt: new Date() } },
    { upsert: true },
  );
}

/** What the caller is: nobody, a functional user, or one whose role may view disabled feeds. */
export interface FeedReader {
  user: boolean;
  viewFeeds: boolean;
}

export function mayRead(access: FeedAccess, reader: FeedReader): boolean {
  if (access === 'public') return true;
  if (access === 'authenticated') return reader.user;
  return reader.viewFeeds;
}

/**
 * Which statuses a feed request may return: 'all', only 'local' or 'remote' ones, or 'none'.
 * `local`/`remote` are the request's parameters.
 */
export function feedOrigin(
  pair: FeedAccessPair,
  reader: FeedReader,
  wanted: { local: boolean; remote: boolean },
): 'all' | 'local' | 'remote' | 'none' {
  const localOnly = (wanted.local && !wanted.remote) || !mayRead(pair.remote, reader);
  const remoteOnly = (wanted.remote && !wanted.local) || !mayRead(pair.local, reader);
  if ((localOnly && !mayRead(pair.local, reader)) || (remoteOnly && !mayRead(pair.remote, reader))) return 'none';
  if (localOnly && remoteOnly) return 'none';
  if (localOnly) return 'local';
  if (remoteOnly) return 'remote';
  return 'all';
}

/** Mastodon's require_auth?: a logged-out request for a feed that is not public is refused. */
export function requiresLogin(pair: FeedAccessPair, wanted: { local: boolean; remote: boolean }): boolean {
  if (wanted.local && !wanted.remote) return pair.local !== 'public';
  if (wanted.remote && !wanted.local) return pair.remote !== 'public';
  return pair.local !== 'public' || pair.remote !== 'public';
}
