// Opening a remote thread (GET /api/v1/statuses/:id/context) as a signed-in user crawls its
// replies in the background, as Mastodon 4.4+ does: at most one crawl per status at a time, not
// before the status is FETCH_REPLIES_INITIAL_WAIT_MINUTES old, then at most every
// FETCH_REPLIES_COOLDOWN_MINUTES. The answer carries `Mastodon-Async-Refresh` while it runs.
import type { Core } from '../../context.ts';
import type { StatusDoc } from '../../model/statuses.ts';
import { hostOf } from '../uris.ts';
import { shouldFetchReplies } from './fetchReplies.ts';
import { asyncRefreshHeader, dropAsyncRefresh, isAsyncRefreshRunning, startAsyncRefresh } from './asyncRefresh.ts';

/** The `Mastodon-Async-Refresh` header for this context request, starting a crawl if one is due. */
export async function contextRefresh(core: Core, status: StatusDoc, signedIn: boolean): Promise<string | null> {
  if (status.local || !core.config.federation.fetchReplies.enabled) return null;
  const key = `context:${status._id}:refresh`;
  if (await isAsyncRefreshRunning(core, key)) return asyncRefreshHeader(core, key);
  if (!signedIn || !shouldFetchReplies(core, status)) return null;
  if (!(await startAsyncRefresh(core, key))) return asyncRefreshHeader(core, key);
  try {
    await core.outbox.publishDirect([
      {
        type: 'RepliesFetchRequested',
        key: hostOf(status.uri) ?? status.uri,
        payload: {
          statusId: String(status._id),
          mode: 'thread',
          collection: null,
          items: [],
          depth: 0,
          refreshKey: key,
        },
      },
    ]);
  } catch (err) {
    // The thread is still answered; the next open tries again.
    core.logger.warn({ err, statusId: String(status._id) }, 'replies crawl not queued');
    await dropAsyncRefresh(core, key);
    return null;
  }
  return asyncRefreshHeader(core, key);
}
