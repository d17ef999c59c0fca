// The link-previews pipeline: fetches the card of the first link of new and edited statuses
// (core/previews/fetchCard.ts, SSRF-safe, 1 MiB / 5 s) and attaches it to the status. A public
// status's card also counts its author for the link's trend (core/trends/). It also checks the
// links of a profile's changed fields for rel="me" (core/accounts/linkVerification.ts, as
// Mastodon's VerifyAccountLinksWorker): both fetch other people's pages in the background.
import type { Core } from '../../services/core/context.ts';
import { batch } from '../../services/core/db/redis.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { statuses, type StatusDoc } from '../../services/core/model/statuses.ts';
import { newStatuses } from '../../services/core/statuses/recentlyPosted.ts';
import { fetchCard, firstLink } from '../../services/core/previews/fetchCard.ts';
import { attachCard, cardOfStatus, upsertCard } from '../../services/core/previews/cards.ts';
import { recordUse } from '../../services/core/trends/counters.ts';
import { verifyAccountLinks } from '../../services/core/accounts/linkVerification.ts';
import { runPipeline, type Pipeline, type PipelineOverrides, BACKGROUND_FETCH } from '../runtime/index.ts';

export const TYPES = ['StatusCreated', 'StatusUpdated', 'AccountUpdated'] as const;
type LinkPreviewEvent = (typeof TYPES)[number];

export type LinkPreviewsPipelineOptions = PipelineOverrides<LinkPreviewEvent>;

/** Fetches and attaches the card of one status; returns whether it has one. */
export async function previewStatus(core: Core, statusId: bigint): Promise<boolean> {
  return previewStatusDoc(core, await collection(core.db, statuses).findOne({ _id: statusId }));
}

async function previewStatusDoc(core: Core, status: StatusDoc | null): Promise<boolean> {
  // Direct messages stay private: fetching their links would tell the link's host.
  if (!status || status.deletedAt || status.reblogOfId !== null || status.visibility === 'direct') return false;
  const url = firstLink(status);
  if (!url) return false;
  const statusId = status._id;
  const current = await cardOfStatus(core, statusId);
  if (current?.url === url) return true;
  const fields = await fetchCard(core.config, url);
  if (!fields) return false;
  const card = await upsertCard(core, fields);
  await attachCard(core, statusId, card._id);
  if (status.visibility === 'public' && !status.sensitive && !status.spoilerText) {
    const pipe = batch(core.redis);
    recordUse(pipe, {
      kind: 'link',
      item: String(card._id),
      accountId: String(status.accountId),
      statusId: String(status._id),
      atMs: status.createdAt.getTime(),
      language: status.language ?? card.language,
    });
    await pipe.exec();
  }
  return true;
}

export function runLinkPreviewsPipeline(core: Core, opts: LinkPreviewsPipelineOptions = {}): Promise<Pipeline> {
  return runPipeline({
    core,
    name: 'link-previews',
    types: TYPES,
    ...BACKGROUND_FETCH,
    ...opts,
    // A batch's statuses in one read; most have no link and cost nothing more.
    async handleBatch(events) {
      const profiles = new Set<bigint>();
      const ids: bigint[] = [];
      for (const e of events) {
        if (e.type === 'AccountUpdated') {
          // Local profiles on an edit; remote ones when a fetched or updated actor has fields to check.
          if (e.payload.changed.includes('fields')) profiles.add(BigInt(e.payload.accountId));
        } else ids.push(BigInt(e.payload.statusId));
      }
      for (const accountId of profiles) await verifyAccountLinks(core, accountId);
      if (ids.length === 0) return;
      for (const doc of await newStatuses(core, ids)) await previewStatusDoc(core, doc);
    },
  });
}
