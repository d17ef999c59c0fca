// Redis cache of the public instance documents (every client start reads them). Each document has a
// fixed key, so an admin change — from the API or the CLI, in any process — drops them all at once.
import type { Core } from '../context.ts';
import { delAcrossSlots } from '../db/redisSlots.ts';

export const INSTANCE_DOCUMENTS = [
  'v2',
  'v1',
  'nodeinfo',
  'rules',
  'extended_description',
  'privacy_policy',
  'terms_of_service',
  'peers',
  'activity',
  'domain_blocks',
] as const;
export type InstanceDocument = (typeof INSTANCE_DOCUMENTS)[number];

const key = (doc: InstanceDocument) => `instance:cache:${doc}`;

/** The cached value of `doc`, or `compute()` stored for `seconds`. */
export async function cachedDocument<T>(
  core: Core,
  doc: InstanceDocument,
  seconds: number,
  compute: () => Promise<T>,
): Promise<T> {
  const hit = await core.redis.get(key(doc));
  if (hit !== null) return JSON.parse(hit) as T;
  const value = await compute();
  await core.redis.set(key(doc), JSON.stringify(value), 'EX', seconds);
  return value;
}

export async function invalidateInstanceCache(core: Core): Promise<void> {
  await delAcrossSlots(core.redis, INSTANCE_DOCUMENTS.map(key));
}
