// Preview cards of statuses: which card a status shows, and attaching one (the link-previews
// pipeline fetches it; see fetchCard.ts).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection, insertOnce, insertOrTwin } from '../db/mongo.ts';
import { nextSerialId } from '../ids.ts';
import { invalidateRenderedStatuses } from '../statuses/renderCache.ts';
import { previewCardProviders, previewCards, statusCards, type PreviewCardDoc } from '../model/previewCards.ts';

/** status id → its card, for a batch of statuses (two indexed queries). */
export async function loadStatusCards(core: Core, statusIds: readonly Id[]): Promise<Map<bigint, PreviewCardDoc>> {
  if (statusIds.length === 0) return new Map();
  const links = await collection(core.db, statusCards)
    .find({ _id: { $in: [...new Set(statusIds)] } })
    .toArray();
  if (links.length === 0) return new Map();
  const cards = await collection(core.db, previewCards)
    .find({ _id: { $in: [...new Set(links.map((l) => l.cardId))] } })
    .toArray();
  const byId = new Map(cards.map((c) => [c._id, c]));
  const out = new Map<bigint, PreviewCardDoc>();
  for (const l of links) {
    const c = byId.get(l.cardId);
    if (c) out.set(l._id, c);
  }
  return out;
}

export type CardFields = Omit<PreviewCardDoc, '_id' | 'createdAt' | 'updatedAt'>;

/** The publisher domain of a card URL (lower-cased host without `www.`). */
export function publisherDomain(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return '';
  }
}

/** Records the card's publisher once (for the admin's publisher review). */
async function ensureProvider(core: Core, url: string): Promise<void> {
  const domain = publisherDomain(url);
  if (!domain) return;
  const coll = collection(core.db, previewCardProviders);
  if (await coll.findOne({ domain })) return;
  await insertOnce(coll, { _id: await nextSerialId(core.db, 'preview_card_providers'), domain, createdAt: new Date() });
}

/** Stores (or refreshes) the card of a URL; returns it. */
export async function upsertCard(core: Core, fields: CardFields): Promise<PreviewCardDoc> {
  await ensureProvider(core, fields.url);
  const coll = collection(core.db, previewCards);
  const now = new Date();
  const existing = await coll.findOne({ url: fields.url });
  if (existing) {
    await coll.updateOne({ _id: existing._id }, { $set: { ...fields, updatedAt: now } });
    return { ...existing, ...fields, updatedAt: now };
  }
  const doc: PreviewCardDoc = {
    _id: await nextSerialId(core.db, 'preview_cards'),
    ...fields,
    createdAt: now,
    updatedAt: now,
  };
  return insertOrTwin(coll, doc, { url: fields.url });
}

export async function attachCard(core: Core, statusId: Id, cardId: Id): Promise<void> {
  await collection(core.db, statusCards).updateOne(
    { _id: statusId },
    { $set: { cardId }, $setOnInsert: { createdAt: new Date() } },
    { upsert: true },
  );
  // Timelines serve cached renderings; the card arrives after the status was first rendered.
  await invalidateRenderedStatuses(core, [statusId]);
}

export async function cardOfStatus(core: Core, statusId: Id): Promise<PreviewCardDoc | null> {
  return (await loadStatusCards(core, [statusId])).get(statusId) ?? null;
}

export async function cardsById(core: Core, ids: readonly Id[]): Promise<Map<bigint, PreviewCardDoc>> {
  if (ids.length === 0) return new Map();
  const docs = await collection(core.db, previewCards)
    .find({ _id: { $in: [...new Set(ids)] } })
    .toArray();
  return new Map(docs.map((d) => [d._id, d]));
}
