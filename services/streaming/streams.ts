// Mastodon's stream names and what they need: the Redis channels behind each, the scope a token
// must hold, and whether a user is needed at all.
import type { Core } from '../core/context.ts';
import type { CachedAccount } from '../core/model/accounts.ts';
import type { CachedUser } from '../core/model/users.ts';
import { roleOfUser } from '../core/roles/roles.ts';
import { hasPermission } from '../core/roles/permissions.ts';
import { feedOrigin, getFeedAccess, requiresLogin, type FeedKind } from '../core/settings/feedAccess.ts';
import { timelineChannels } from '../core/streaming/channels.ts';
import { normalizeTagName } from '../core/text/extract.ts';
import { ownList } from '../core/lists/lists.ts';
import { parseId } from '../core/ids.ts';

export interface StreamRequest {
  stream: string;
  tag?: string;
  list?: string;
}

export interface ResolvedStream {
  /** What clients see in `stream` of each message, e.g. ["hashtag", "cats"]. */
  label: string[];
  channels: string[];
  /** Key of this subscription on a connection (subscribing twice is one subscription). */
  key: string;
  /** Which statuses the viewer may get here (public and hashtag streams: the feed access settings). */
  origin: 'all' | 'local' | 'remote' | 'none';
}

export interface StreamViewer {
  account: CachedAccount | null;
  user: CachedUser | null;
}

/**
 * Public and hashtag streams under the instance's feed access settings: a logged-out viewer of a
 * feed that is not public is refused (as the REST timeline is); otherwise the origins the viewer
 * may not read are left out.
 */
async function publicOrigin(
  core: Core,
  viewer: StreamViewer | null,
  kind: FeedKind,
  wanted: { local: boolean; remote: boolean },
): Promise<ResolvedStream['origin']> {
  const pair = (await getFeedAccess(core))[kind];
  const user = viewer?.account ? viewer.user : null;
  if (!user && requiresLogin(pair, wanted)) throw new StreamError('Missing access token');
  const someDisabled = pair.local === 'disabled' || pair.remote === 'disabled';
  const viewFeeds =
    someDisabled && user !== null && hasPermission((await roleOfUser(core, user)).permissions, 'view_feeds');
  return feedOrigin(pair, { user: user !== null, viewFeeds }, wanted);
}

export class StreamError extends Error {}

const READ_STATUSES = ['read', 'read:statuses'];
const READ_NOTIFICATIONS = ['read', 'read:notifications'];

export function scopesFor(stream: string): string[] {
  return stream === 'user:notification' ? READ_NOTIFICATIONS : READ_STATUSES;
}

export async function resolveStream(
  core: Core,
  viewer: StreamViewer | null,
  req: StreamRequest,
): Promise<ResolvedStream> {
  const account = viewer?.account ?? null;
  const name = req.stream;
  const needUser = () => {
    if (!account) throw new StreamError('Missing access token');
    return account;
  };
  switch (name) {
    case 'user': {
      const a = needUser();
      return {
        label: ['user'],
        channels: [
          timelineChannels.user(a._id),
          timelineChannels.userNotifications(a._id),
          timelineChannels.announcements(),
        ],
        key: name,
        origin: 'all',
      };
    }
    case 'user:notification': {
      const a = needUser();
      return {
        label: ['user:notification'],
        channels: [timelineChannels.userNotifications(a._id)],
        key: name,
        origin: 'all',
      };
    }
    case 'direct': {
      const a = needUser();
      return { label: ['direct'], channels: [timelineChannels.direct(a._id)], key: name, origin: 'all' };
    }
    case 'public':
    case 'public:media':
    case 'public:local':
    case 'public:local:media':
    case 'public:remote':
    case 'public:remote:media': {
      const scope = name.startsWith('public:local') ? 'local' : name.startsWith('public:remote') ? 'remote' : 'all';
      const origin = await publicOrigin(core, viewer, 'live', { local: scope === 'local', remote: scope === 'remote' });
      return {
        label: [name],
        channels: [timelineChannels.public(scope, name.endsWith(':media'))],
        key: name,
        origin,
      };
    }
    case 'hashtag':
    case 'hashtag:local': {
      const tag = normalizeTagName((req.tag ?? '').trim().replace(/^#/, ''));
      if (!tag) throw new StreamError('No tag for stream provided');
      const local = name === 'hashtag:local';
      return {
        label: [name, req.tag ?? tag],
        channels: [timelineChannels.hashtag(tag, local)],
        key: `${name}:${tag}`,
        origin: await publicOrigin(core, viewer, 'topic', { local, remote: false }),
      };
    }
    case 'list': {
      const a = needUser();
      const list = await ownList(core, a, parseId(req.list)).catch(() => {
        throw new StreamError('Permission denied');
      });
      return {
        label: ['list', String(list._id)],
        channels: [timelineChannels.list(list._id)],
        key: `list:${list._id}`,
        origin: 'all',
      };
    }
    default:
      throw new StreamError('Unknown stream type');
  }
}
