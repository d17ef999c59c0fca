// Mastodon's stream names and what they need: the Redis channels behind each, the scope a token
// must hold, and whether a user is needed at all.
import type { Core } from '../core/context.ts';
import type { AccountDoc } from '../core/model/accounts.ts';
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
}

export class StreamError extends Error {}

const READ_STATUSES = ['read', 'read:statuses'];
const READ_NOTIFICATIONS = ['read', 'read:notifications'];

export function scopesFor(stream: string): string[] {
  return stream === 'user:notification' ? READ_NOTIFICATIONS : READ_STATUSES;
}

export async function resolveStream(
  core: Core,
  account: AccountDoc | null,
  req: StreamRequest,
): Promise<ResolvedStream> {
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
      };
    }
    case 'user:notification': {
      const a = needUser();
      return { label: ['user:notification'], channels: [timelineChannels.userNotifications(a._id)], key: name };
    }
    case 'direct': {
      const a = needUser();
      return { label: ['direct'], channels: [timelineChannels.direct(a._id)], key: name };
    }
    case 'public':
    case 'public:media':
      return { label: [name], channels: [timelineChannels.public('all', name.endsWith(':media'))], key: name };
    case 'public:local':
    case 'public:local:media':
      return { label: [name], channels: [timelineChannels.public('local', name.endsWith(':media'))], key: name };
    case 'public:remote':
    case 'public:remote:media':
      return { label: [name], channels: [timelineChannels.public('remote', name.endsWith(':media'))], key: name };
    case 'hashtag':
    case 'hashtag:local': {
      const tag = normalizeTagName((req.tag ?? '').trim().replace(/^#/, ''));
      if (!tag) throw new StreamError('No tag for stream provided');
      return {
        label: [name, req.tag ?? tag],
        channels: [timelineChannels.hashtag(tag, name === 'hashtag:local')],
        key: `${name}:${tag}`,
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
      };
    }
    default:
      throw new StreamError('Unknown stream type');
  }
}
