// The search-index pipeline: keeps the Redis inverted index of statuses (core/search/) in step
// with status events. New and edited posts are (re)indexed, deleted ones removed; favourites and
// boosts make a status searchable for the local account that interacted with it; an account that
// switches `indexable` has its public posts added to or removed from the public scope.
import type { Core } from '../../services/core/context.ts';
import { indexForAccount, indexPosts, reindexAccountPosts, unindexPost } from '../../services/core/search/indexer.ts';
import {
  runPipeline,
  type Pipeline,
  type PipelineContext,
  type PipelineEvent,
  type PipelineOverrides,
  BACKGROUND_FETCH,
} from '../runtime/index.ts';

export const TYPES = [
  'StatusCreated',
  'StatusUpdated',
  'StatusDeleted',
  'ReblogCreated',
  'FavouriteCreated',
  'AccountUpdated',
] as const;
type SearchIndexEvent = (typeof TYPES)[number];

export type SearchIndexPipelineOptions = PipelineOverrides<SearchIndexEvent>;

export function runSearchIndexPipeline(core: Core, opts: SearchIndexPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'search-index',
    types: TYPES,
    ...BACKGROUND_FETCH,
    ...opts,
    // New and edited posts of a batch are indexed together (each reads the status as it is now,
    // so a deletion later in the batch still wins); the rest one by one, in order.
    async handleBatch(events, ctx) {
      await indexPosts(
        core,
        events.flatMap((e) =>
          e.type === 'StatusCreated' || e.type === 'StatusUpdated' ? [BigInt(e.payload.statusId)] : [],
        ),
      );
      for (const event of events) await handleOther(event, ctx);
    },
  });

  async function handleOther(event: PipelineEvent<SearchIndexEvent>, ctx: PipelineContext): Promise<void> {
    switch (event.type) {
      case 'StatusCreated':
      case 'StatusUpdated':
        return;
      case 'StatusDeleted':
        return unindexPost(core, BigInt(event.payload.statusId));
      case 'ReblogCreated':
        return indexForAccount(core, BigInt(event.payload.accountId), BigInt(event.payload.reblogOfId));
      case 'FavouriteCreated':
        return indexForAccount(core, BigInt(event.payload.accountId), BigInt(event.payload.statusId));
      case 'AccountUpdated':
        if (event.payload.changed.includes('indexable'))
          await reindexAccountPosts(core, BigInt(event.payload.accountId), () => ctx.heartbeat());
        return;
    }
  }
}
