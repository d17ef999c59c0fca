// Announcements: administrators write them (CLI), publish and unpublish them; users list, dismiss
// and react to published ones. Every visible change is streamed to signed-in users' `user` streams
// as Mastodon's `announcement`, `announcement.reaction` and `announcement.delete` events.
import type { Core } from '../context.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { accounts, type AccountDoc, type CachedAccount } from '../model/accounts.ts';
import {
  announcements,
  announcementDismissals,
  announcementReactions,
  type AnnouncementDoc,
  type AnnouncementMention,
} from '../model/announcements.ts';
import { customEmojis } from '../model/customEmojis.ts';
import { extractEntities, normalizeTagName } from '../text/extract.ts';
import { formatStatusHtml } from '../text/formatStatus.ts';
import { emojisInTexts, presentEmoji, findLocalEmoji, type CustomEmojiEntity } from '../emojis/emojis.ts';
import { publishToStream, timelineChannels } from '../streaming/channels.ts';
import { DomainError, notFound, validationFailed } from '../errors.ts';

export const ANNOUNCEMENT_TEXT_LIMIT = 10_000;
/** Distinct reactions per announcement (Mastodon's ReactionValidator::LIMIT). */
export const REACTIONS_LIMIT = 8;

/** An invalid announcement (422 `Validation failed: ...`), or a missing one (404; the CLI shows the message). */
export class AnnouncementError extends DomainError {
  constructor(message: string, status: 404 | 422 = 422) {
    super(status, status === 404 ? 'Record not found' : `Validation failed: ${message}`);
    this.message = message;
  }
}

export interface AnnouncementInput {
  text: string;
  startsAt?: Date | null;
  endsAt?: Date | null;
  allDay?: boolean;
}

export interface ReactionEntity {
  name: string;
  count: number;
  me?: boolean;
  url?: string;
  static_url?: string;
}

export interface AnnouncementEntity {
  id: string;
  content: string;
  starts_at: string | null;
  ends_at: string | null;
  all_day: boolean;
  published_at: string;
  updated_at: string;
  read?: boolean;
  mentions: { id: string; username: string; url: string; acct: string }[];
  statuses: { id: string; url: string }[];
  tags: { name: string; url: string }[];
  emojis: CustomEmojiEntity[];
  reactions: ReactionEntity[];
}

function checkInput(input: AnnouncementInput): void {
  if (input.text.trim() === '') throw new AnnouncementError('Text can\u2019t be blank');
  if ([...input.text].length > ANNOUNCEMENT_TEXT_LIMIT)
    throw new AnnouncementError(`Text is too long (maximum is ${ANNOUNCEMENT_TEXT_LIMIT} characters)`);
  const { startsAt = null, endsAt = null } = input;
  if ((startsAt === null) !== (endsAt === null))
    throw new AnnouncementError('A time range needs both a start and an end');
  if (startsAt && endsAt && endsAt < startsAt) throw new AnnouncementError('The end must not be before the start');
  if (input.allDay && startsAt === null) throw new AnnouncementError('all_day needs a time range');
}

async function render(core: Core, text: string): Promise<Pick<AnnouncementDoc, 'content' | 'mentions' | 'tagNames'>> {
  const entities = extractEntities(text);
  const names = [
    ...new Set(
      entities
        .filter((e) => e.kind === 'mention' && (e.domain === null || e.domain === core.config.localDomain))
        .map((e) => (e.kind === 'mention' ? e.username.toLowerCase() : '')),
    ),
  ].slice(0, 50);
  const found: AccountDoc[] = names.length
    ? await collection(core.db, accounts)
        .find({ usernameLower: { $in: names }, domain: null, suspendedAt: null })
        .toArray()
    : [];
  const mentions: AnnouncementMention[] = [];
  const content = formatStatusHtml(text, {
    baseUrl: core.config.baseUrl,
    resolveMention: (username, domain) => {
      if (domain !== null && domain !== core.config.localDomain) return null;
      const a = found.find((x) => x.usernameLower === username.toLowerCase());
      if (!a) return null;
      if (!mentions.some((m) => m.accountId === a._id))
        mentions.push({ accountId: a._id, username: a.username, acct: a.username, url: a.url ?? a.uri });
      return { url: a.url ?? a.uri, display: a.username };
    },
  });
  const tagNames = [...new Set(entities.flatMap((e) => (e.kind === 'hashtag' ? [normalizeTagName(e.name)] : [])))];
  return { content, mentions, tagNames };
}

export async function findAnnouncement(core: Core, id: Id): Promise<AnnouncementDoc | null> {
  return collection(core.db, announcements).findOne({ _id: id });
}

async function broadcast(
  core: Core,
  event: 'announcement' | 'announcement.reaction' | 'announcement.delete',
  payload: string,
) {
  await publishToStream(core.redis, core.config, timelineChannels.announcements(), { event, payload });
}

async function broadcastAnnouncement(core: Core, doc: AnnouncementDoc): Promise<void> {
  const [entity] = await presentAnnouncements(core, [doc], null);
  await broadcast(core, 'announcement', JSON.stringify(entity));
}

export async function createAnnouncement(
  core: Core,
  input: AnnouncementInput & { publish?: boolean },
): Promise<AnnouncementDoc> {
  checkInput(input);
  const now = new Date();
  const doc: AnnouncementDoc = {
    _id: await nextSerialId(core.db, 'announcements'),
    text: input.text,
    ...(await render(core, input.text)),
    startsAt: input.startsAt ?? null,
    endsAt: input.endsAt ?? null,
    allDay: input.allDay ?? false,
    published: input.publish ?? false,
    publishedAt: input.publish ? now : null,
    createdAt: now,
    updatedAt: now,
  };
  await collection(core.db, announcements).insertOne(doc);
  if (doc.published) await broadcastAnnouncement(core, doc);
  return doc;
}

export async function updateAnnouncement(
  core: Core,
  id: Id,
  changes: Partial<AnnouncementInput>,
): Promise<AnnouncementDoc> {
  const current = await findAnnouncement(core, id);
  if (!current) throw new AnnouncementError(`No announcement ${id}`, 404);
  const next: AnnouncementInput = {
    text: changes.text ?? current.text,
    startsAt: changes.startsAt !== undefined ? changes.startsAt : current.startsAt,
    endsAt: changes.endsAt !== undefined ? changes.endsAt : current.endsAt,
    allDay: changes.allDay ?? current.allDay,
  };
  checkInput(next);
  const doc = await collection(core.db, announcements).findOneAndUpdate(
    { _id: id },
    {
      $set: {
        text: next.text,
        ...(await render(core, next.text)),
        startsAt: next.startsAt ?? null,
        endsAt: next.endsAt ?? null,
        allDay: next.allDay ?? false,
        updatedAt: new Date(),
      },
    },
    { returnDocument: 'after' },
  );
  if (!doc) throw new AnnouncementError(`No announcement ${id}`, 404);
  if (doc.published) await broadcastAnnouncement(core, doc);
  return doc;
}

export async function setPublished(core: Core, id: Id, published: boolean): Promise<AnnouncementDoc> {
  const now = new Date();
  const doc = await collection(core.db, announcements).findOneAndUpdate(
    { _id: id },
    { $set: published ? { published, publishedAt: now, updatedAt: now } : { published, updatedAt: now } },
    { returnDocument: 'after' },
  );
  if (!doc) throw new AnnouncementError(`No announcement ${id}`, 404);
  if (published) await broadcastAnnouncement(core, doc);
  else await broadcast(core, 'announcement.delete', String(id));
  return doc;
}

export async function deleteAnnouncement(core: Core, id: Id): Promise<void> {
  const doc = await collection(core.db, announcements).findOneAndDelete({ _id: id });
  if (!doc) throw new AnnouncementError(`No announcement ${id}`, 404);
  await Promise.all([
    collection(core.db, announcementDismissals).deleteMany({ announcementId: id }),
    collection(core.db, announcementReactions).deleteMany({ announcementId: id }),
  ]);
  if (doc.published) await broadcast(core, 'announcement.delete', String(id));
}

export async function listAllAnnouncements(core: Core): Promise<AnnouncementDoc[]> {
  return collection(core.db, announcements).find({}).sort({ _id: 1 }).toArray();
}

/** Oldest first by the time they are about (start, else publication, else creation), as Mastodon. */
function chronological(a: AnnouncementDoc, b: AnnouncementDoc): number {
  const at = (d: AnnouncementDoc) => (d.startsAt ?? d.publishedAt ?? d.createdAt).getTime();
  return at(a) - at(b) || (a._id < b._id ? -1 : 1);
}

/** GET /api/v1/announcements: published ones, without those the viewer dismissed unless asked. */
export async function announcementsFor(
  core: Core,
  viewer: CachedAccount,
  withDismissed: boolean,
): Promise<AnnouncementEntity[]> {
  const published = await collection(core.db, announcements).find({ published: true }).toArray();
  const dismissed = new Set(
    (
      await collection(core.db, announcementDismissals)
        .find({ accountId: viewer._id }, { projection: { announcementId: 1 } })
        .toArray()
    ).map((d) => d.announcementId),
  );
  const shown = published.filter((a) => withDismissed || !dismissed.has(a._id)).sort(chronological);
  const out = await presentAnnouncements(core, shown, viewer);
  return out.map((e, i) => ({ ...e, read: dismissed.has(shown[i]._id) }));
}

async function publishedAnnouncement(core: Core, id: Id): Promise<AnnouncementDoc> {
  const doc = await collection(core.db, announcements).findOne({ _id: id, published: true });
  if (!doc) throw notFound();
  return doc;
}

export async function dismissAnnouncement(core: Core, viewer: CachedAccount, id: Id): Promise<void> {
  await publishedAnnouncement(core, id);
  await collection(core.db, announcementDismissals).updateOne(
    { _id: `${viewer._id}:${id}` },
    { $setOnInsert: { accountId: viewer._id, announcementId: id, createdAt: new Date() } },
    { upsert: true },
  );
}

const UNICODE_EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v');

async function reactionCount(core: Core, id: Id, name: string): Promise<number> {
  return collection(core.db, announcementReactions).countDocuments({ announcementId: id, name });
}

async function broadcastReaction(core: Core, id: Id, name: string): Promise<void> {
  const count = await reactionCount(core, id, name);
  await broadcast(core, 'announcement.reaction', JSON.stringify({ name, count, announcement_id: String(id) }));
}

export async function addReaction(core: Core, viewer: CachedAccount, id: Id, name: string): Promise<void> {
  await publishedAnnouncement(core, id);
  let customEmojiId: Id | null = null;
  if (!UNICODE_EMOJI.test(name)) {
    const emoji = await findLocalEmoji(core, name);
    if (!emoji || emoji.disabled) throw validationFailed('Name is not a recognized emoji');
    customEmojiId = emoji._id;
  }
  const reactions = collection(core.db, announcementReactions);
  const names = (await reactions.distinct('name', { announcementId: id })) as string[];
  if (!names.includes(name) && names.length >= REACTIONS_LIMIT)
    throw validationFailed('Maximum number of reactions reached');
  try {
    await reactions.insertOne({
      _id: await nextSerialId(core.db, 'announcement_reactions'),
      accountId: viewer._id,
      announcementId: id,
      name,
      customEmojiId,
      createdAt: new Date(),
    });
  } catch (err) {
    if (isDuplicateKeyError(err)) return; // reacting twice is one reaction
    throw err;
  }
  await broadcastReaction(core, id, name);
}

export async function removeReaction(core: Core, viewer: CachedAccount, id: Id, name: string): Promise<void> {
  await publishedAnnouncement(core, id);
  const res = await collection(core.db, announcementReactions).deleteOne({
    accountId: viewer._id,
    announcementId: id,
    name,
  });
  if (res.deletedCount === 1) await broadcastReaction(core, id, name);
}

/** Renders announcements; `me` on reactions only for a viewer. */
export async function presentAnnouncements(
  core: Core,
  docs: AnnouncementDoc[],
  viewer: CachedAccount | null,
): Promise<AnnouncementEntity[]> {
  if (docs.length === 0) return [];
  const ids = docs.map((d) => d._id);
  const rows = await collection(core.db, announcementReactions)
    .find({ announcementId: { $in: ids } })
    .sort({ _id: 1 })
    .toArray();
  const emojiIds = [...new Set(rows.map((r) => r.customEmojiId).filter((e): e is Id => e !== null))];
  const emojiDocs = await findInOrder(collection(core.db, customEmojis), emojiIds);
  const emojiById = new Map(emojiDocs.map((e) => [e._id, presentEmoji(core, e, false)]));
  const byAnnouncement = new Map<Id, Map<string, ReactionEntity>>();
  for (const r of rows) {
    let reactions = byAnnouncement.get(r.announcementId);
    if (!reactions) byAnnouncement.set(r.announcementId, (reactions = new Map()));
    let entry = reactions.get(r.name);
    if (!entry) {
      entry = { name: r.name, count: 0 };
      if (viewer) entry.me = false;
      const emoji = r.customEmojiId === null ? undefined : emojiById.get(r.customEmojiId);
      if (emoji) {
        entry.url = emoji.url;
        entry.static_url = emoji.static_url;
      }
      reactions.set(r.name, entry);
    }
    entry.count += 1;
    if (viewer && r.accountId === viewer._id) entry.me = true;
  }
  const emojis = await Promise.all(docs.map((d) => emojisInTexts(core, [d.text])));
  return docs.map((d, i) => ({
    id: String(d._id),
    content: d.content,
    starts_at: d.startsAt ? d.startsAt.toISOString() : null,
    ends_at: d.endsAt ? d.endsAt.toISOString() : null,
    all_day: d.allDay,
    published_at: (d.publishedAt ?? d.createdAt).toISOString(),
    updated_at: d.updatedAt.toISOString(),
    mentions: d.mentions.map((m) => ({ id: String(m.accountId), username: m.username, url: m.url, acct: m.acct })),
    statuses: [],
    tags: d.tagNames.map((name) => ({ name, url: `${core.config.baseUrl}/tags/${encodeURIComponent(name)}` })),
    emojis: emojis[i],
    reactions: [...(byAnnouncement.get(d._id)?.values() ?? [])],
  }));
}
