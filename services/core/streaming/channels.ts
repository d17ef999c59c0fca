// The Redis pub/sub channels between the pipelines and the streaming servers, named as Mastodon
// names them (timeline:<accountId>, timeline:public, timeline:hashtag:<tag>, timeline:list:<id>...)
// under REDIS_NAMESPACE (ioredis does not prefix channels, so this does). A message is
// `{"event": "update" | "delete" | ..., "payload": "<string>"}` as Mastodon's streaming server reads it.
import type { Config } from '../config.ts';
import { isCluster, type Redis } from '../db/redis.ts';
import { mgetAcrossSlots, runScript } from '../db/redisSlots.ts';

export type StreamEvent =
  | 'update'
  | 'delete'
  | 'status.update'
  | 'notification'
  | 'conversation'
  | 'filters_changed'
  | 'announcement'
  | 'announcement.reaction'
  | 'announcement.delete';

export interface StreamMessage {
  event: StreamEvent;
  payload: string;
}

export function channelName(config: Config, name: string): string {
  return config.redisNamespace ? `${config.redisNamespace}:${name}` : name;
}

export const timelineChannels = {
  user: (accountId: bigint | string) => `timeline:${accountId}`,
  userNotifications: (accountId: bigint | string) => `timeline:${accountId}:notifications`,
  direct: (accountId: bigint | string) => `timeline:direct:${accountId}`,
  public: (scope: 'all' | 'local' | 'remote', media = false) =>
    `timeline:public${scope === 'all' ? '' : `:${scope}`}${media ? ':media' : ''}`,
  hashtag: (tag: string, local = false) => `timeline:hashtag:${tag}${local ? ':local' : ''}`,
  list: (listId: bigint | string) => `timeline:list:${listId}`,
  /**
   * Announcements and their reactions, for every signed-in `user` stream at once. Mastodon sends them
   * to each active user's `timeline:<id>`; one broadcast channel does the same in one publish.
   */
  announcements: () => 'timeline:announcements',
};

export async function publishToStream(
  redis: Redis,
  config: Config,
  channel: string,
  message: StreamMessage,
): Promise<void> {
  await redis.publish(channelName(config, channel), JSON.stringify(message));
}

/**
 * While a streaming process listens to a channel it keeps this key alive (Mastodon's
 * `subscribed:<channel>`), so that a fan-out publishes only to the followers someone streams for:
 * most of a big account's followers are not connected at that moment.
 */
export function listenerKey(channel: string): string {
  return `stream:listening:${channel}`;
}

/** A listener key lives this long; streaming processes refresh theirs every LISTENER_REFRESH_MS. */
export const LISTENER_TTL_SECONDS = 180;
export const LISTENER_REFRESH_MS = 60_000;

/**
 * PUBLISH of ARGV[1] on every channel ARGV[2..]: the message crosses the wire once, not per channel.
 * No keys: on a cluster it runs on any node, whose PUBLISH reaches every node's subscribers.
 */
const PUBLISH_MANY_SCRIPT = `
local n = 0
for i = 2, #ARGV do n = n + redis.call('PUBLISH', ARGV[i], ARGV[1]) end
return n
`;

/**
 * One message on many channels: serialised once, published in one round trip (a script), on those
 * of them some streaming process listens to (one MGET of their listener keys). A single channel is
 * published to directly: a PUBLISH to nobody costs no more than the check.
 */
export async function publishToStreams(
  redis: Redis,
  config: Config,
  channels: string[],
  message: StreamMessage,
): Promise<void> {
  if (channels.length === 0) return;
  if (channels.length === 1)
    return void (await redis.publish(channelName(config, channels[0]!), JSON.stringify(message)));
  const unique = [...new Set(channels)];
  // One MGET (on a cluster, one per hash slot of the listener keys, sent together).
  const listened = await mgetAcrossSlots(redis, unique.map(listenerKey));
  const wanted = unique.filter((_, i) => listened[i] !== null).map((c) => channelName(config, c));
  // Serialised only once someone listens: most posts' updates go to nobody's stream.
  if (wanted.length === 0) return;
  const raw = JSON.stringify(message);
  if (wanted.length === 1) return void (await redis.publish(wanted[0]!, raw));
  // EVAL, not defineCommand: see insertIntoFeeds (core/feeds/feeds.ts).
  await runScript(redis, PUBLISH_MANY_SCRIPT, [], [raw, ...wanted]);
}

/**
 * Which of these channels (unprefixed) a streaming process subscribes to now. A single Redis
 * answers exactly (PUBSUB NUMSUB, one pipeline); on a cluster NUMSUB counts only the subscribers
 * of the node asked, so the listener keys answer instead (one MGET per slot, sent together).
 */
export async function listenedChannels(redis: Redis, config: Config, channels: string[]): Promise<boolean[]> {
  if (channels.length === 0) return [];
  if (isCluster(redis)) return (await mgetAcrossSlots(redis, channels.map(listenerKey))).map((v) => v !== null);
  const pipe = redis.pipeline();
  for (const c of channels) pipe.pubsub('NUMSUB', channelName(config, c));
  const replies = (await pipe.exec()) ?? [];
  return channels.map((_, i) => {
    const [err, reply] = replies[i] ?? [null, null];
    return !err && Number((reply as [string, number] | null)?.[1] ?? 0) > 0;
  });
}
