// The trends pipeline: counts unique accounts per hashtag (public posts), status (favourites and
// boosts) and link (boosts of a status with a card; the link-previews pipeline counts the post
// itself) in Redis HyperLogLogs per day (core/trends/counters.ts), a whole fetched batch at a time
// (one MongoDB read per kind of record, one Redis round trip). Every few minutes one process (a
// Redis lock) refreshes the scores and rankings and sends due review notices (core/trends/refresh.ts).
import type { Core } from '../../services/core/context.ts';
import { batch } from '../../services/core/db/redis.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accountView } from '../../services/core/model/accounts.ts';
import { readThrough } from '../../services/core/db/docCache.ts';
import { statuses, type StatusDoc } from '../../services/core/model/statuses.ts';
import { statusCards } from '../../services/core/model/previewCards.ts';
import { recordUse, type TrendUse } from '../../services/core/trends/counters.ts';
import { refreshTrends } from '../../services/core/trends/refresh.ts';
import { STATUS_TREND_OPTIONS } from '../../services/core/trends/scoring.ts';
import {
  runPipeline,
  type Pipeline,
  type PipelineEvent,
  type PipelineOverrides,
  BACKGROUND_FETCH,
} from '../runtime/index.ts';

export const TYPES = ['StatusCreated', 'ReblogCreated', 'FavouriteCreated'] as const;
type TrendEvent = (typeof TYPES)[number];

export interface TrendsPipelineOptions extends PipelineOverrides<TrendEvent> {
  /** How often the rankings are recomputed (default 5 minutes; 0: never, tests call refreshTrends). */
  refreshIntervalMs?: number;
}

const REFRESH_LOCK = 'trends:refresh-lock';

/** Whether a status may trend (Mastodon's Trends::Statuses#eligible?). */
function statusEligible(
  s: StatusDoc,
  author: { discoverable: boolean; silencedAt: Date | null } | undefined,
  atMs: number,
): boolean {
  return (
    !!author &&
    author.discoverable &&
    !author.silencedAt &&
    !s.deletedAt &&
    s.reblogOfId === null &&
    s.visibility === 'public' &&
    s.inReplyToId === null &&
    !s.sensitive &&
    !s.spoilerText &&
    atMs - s.createdAt.getTime() < STATUS_TREND_OPTIONS.maxAgeMs
  );
}

/** The trend uses of a batch of events. */
export async function usesOf(core: Core, events: readonly PipelineEvent<TrendEvent>[]): Promise<TrendUse[]> {
  const originalIds = new Set<bigint>();
  const accountIds = new Set<bigint>();
  for (const e of events) {
    if (e.type === 'StatusCreated') accountIds.add(BigInt(e.payload.accountId));
    else if (e.type === 'ReblogCreated') originalIds.add(BigInt(e.payload.reblogOfId));
    else originalIds.add(BigInt(e.payload.statusId));
  }
  const originals = originalIds.size
    ? await collection(core.db, statuses)
        .find({ _id: { $in: [...originalIds] } })
        .toArray()
    : [];
  const originalById = new Map(originals.map((s) => [s._id, s]));
  for (const s of originals) accountIds.add(s.accountId);
  const [authorById, cards] = await Promise.all([
    // Through the document cache: new posts' authors were just refilled after their counters.
    readThrough(core, accountView, [...accountIds]),
    originalIds.size
      ? collection(core.db, statusCards)
          .find({ _id: { $in: [...originalIds] } })
          .toArray()
      : [],
  ]);
  const cardOf = new Map(cards.map((c) => [c._id, c.cardId]));

  const uses: TrendUse[] = [];
  for (const e of events) {
    const p = e.payload;
    if (e.type === 'StatusCreated') {
      const pc = e.payload;
      const author = authorById.get(BigInt(pc.accountId));
      if (pc.visibility !== 'public' || !author || author.silencedAt) continue;
      for (const name of new Set(pc.tagNames))
        uses.push({
          kind: 'tag',
          item: name,
          accountId: pc.accountId,
          statusId: pc.statusId,
          atMs: pc.createdAt.getTime(),
          language: pc.language,
        });
      continue;
    }
    const originalId = e.type === 'ReblogCreated' ? e.payload.reblogOfId : e.payload.statusId;
    const original = originalById.get(BigInt(originalId));
    if (!original) continue;
    const atMs = p.createdAt.getTime();
    if (e.type === 'ReblogCreated' && e.payload.visibility !== 'public') continue;
    if (statusEligible(original, authorById.get(original.accountId), atMs))
      uses.push({
        kind: 'status',
        item: originalId,
        accountId: p.accountId,
        statusId: e.type === 'ReblogCreated' ? e.payload.statusId : e.payload.favouriteId,
        atMs,
        language: original.language,
      });
    const cardId = cardOf.get(original._id);
    if (e.type === 'ReblogCreated' && cardId !== undefined && original.visibility === 'public' && !original.spoilerText)
      uses.push({
        kind: 'link',
        item: String(cardId),
        accountId: p.accountId,
        statusId: e.payload.statusId,
        atMs,
        language: original.language,
      });
  }
  return uses;
}

export async function runTrendsPipeline(core: Core, opts: TrendsPipelineOptions = {}): Promise<Pipeline> {
  const { refreshIntervalMs = 5 * 60_000, ...pipelineOpts } = opts;
  const pipeline = await runPipeline({
    core,
    name: 'trends',
    types: TYPES,
    ...BACKGROUND_FETCH,
    ...pipelineOpts,
    async handleBatch(events) {
      const uses = await usesOf(core, events);
      if (uses.length === 0) return;
      const pipe = batch(core.redis);
      for (const u of uses) recordUse(pipe, u);
      await pipe.exec();
    },
  });
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();
  if (refreshIntervalMs > 0) {
    timer = setInterval(() => {
      running = (async () => {
        // One refresh per interval across every trends process.
        const lock = await core.redis.set(REFRESH_LOCK, '1', 'PX', Math.max(1000, refreshIntervalMs - 1000), 'NX');
        if (lock === 'OK') await refreshTrends(core);
      })().catch((err: unknown) => core.logger.error({ err }, 'trends refresh failed'));
    }, refreshIntervalMs);
    timer.unref();
  }
  return {
    ...pipeline,
    async stop() {
      if (timer) clearInterval(timer);
      await running;
      await pipeline.stop();
    },
  };
}
