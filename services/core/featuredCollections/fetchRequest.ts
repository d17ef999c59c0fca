// Asks for a remote account's collections to be read (Mastodon 4.6 FetchFeaturedCollections-
// CollectionService after an actor is stored): a CollectionsFetchRequested job for the fetch
// pipeline (pipelines/replies), keyed by the account's host.
import type { Core } from '../context.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { hostOf } from '../activitypub/uris.ts';

/**
 * Asks for the account's collections to be read (Mastodon 4.6), at most daily per account. Best
 * effort, as the images are.
 */
export async function requestCollections(core: Core, account: AccountDoc): Promise<void> {
  try {
    const fresh = await core.redis.set(`collections:asked:${account._id}`, '1', 'EX', 86_400, 'NX');
    if (fresh === null) return;
    const key = hostOf(account.uri) ?? String(account._id);
    await core.outbox.publishDirect([
      { type: 'CollectionsFetchRequested', key, payload: { accountId: String(account._id) } },
    ]);
  } catch (err) {
    core.logger.warn({ err, accountId: String(account._id) }, 'collections fetch not queued');
  }
}
