// The cached, viewer-independent renderings of statuses ("shells", see statusPage.ts): read from
// this process's recent copies, else Redis; rendered here and stored when missing or
// older than the status's last edit. And the authors' role ids, cached the same way.
import type { Core } from '../context.ts';
import { batch } from '../db/redis.ts';
import { mgetAcrossSlots } from '../db/redisSlots.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { users } from '../model/users.ts';
import {
  localRenderingsOf,
  localRoleIdsOf,
  renderDropCount,
  renderedRoleKey,
  renderedStatusKey,
} from '../statuses/renderCache.ts';
import type { NestedStatus } from './status.ts';
import { accountView } from '../model/accounts.ts';
import { readThrough } from '../db/docCache.ts';
import { findApps } from '../auth/appCache.ts';
import { polls } from '../model/polls.ts';
import { loadAttachments } from '../media/statusAttachments.ts';
import { loadStatusCards } from '../previews/cards.ts';
import { emojisInTexts } from '../emojis/emojis.ts';
import { presentMediaAttachment } from './mediaAttachment.ts';
import { presentMention, presentStatusTag } from './mention.ts';
import { presentPreviewCard } from './previewCard.ts';

/** The cached, viewer-independent part of a status. */
export type Shell = Omit<
  NestedStatus,
  | 'account'
  | 'reblogs_count'
  | 'favourites_count'
  | 'replies_count'
  | 'poll'
  | 'favourited'
  | 'reblogged'
  | 'muted'
  | 'bookmarked'
  | 'pinned'
  | 'filtered'
  | 'quote'
  | 'quotes_count'
  | 'quote_approval'
>;
export interface CachedShell {
  /** `edited_at` of the status it was rendered from. */
  v: string | null;
  /** The reblogged status's id (reblog wrappers). */
  r: string | null;
  s: Shell;
}
const SHELL_TTL_SECONDS = 6 * 3600;
const ROLE_TTL_SECONDS = 600;
const shellKey = renderedStatusKey;
const roleKey = renderedRoleKey;

/** The cached renderings of `ids`: this process's recent copies, else Redis's. */
export async function readShells(core: Core, ids: Id[]): Promise<Map<bigint, CachedShell>> {
  const out = new Map<bigint, CachedShell>();
  if (ids.length === 0) return out;
  const local = localRenderingsOf(core.db);
  const now = Date.now();
  const want: Id[] = [];
  for (const id of ids) {
    const hit = local.get(id, now) as CachedShell | undefined;
    if (hit) out.set(id, hit);
    else want.push(id);
  }
  if (want.length === 0) return out;
  const drops = renderDropCount(core.db);
  const raw = await mgetAcrossSlots(core.redis, want.map(shellKey));
  // A drop while Redis answered may concern what it answered: used once, not kept.
  const keep = renderDropCount(core.db) === drops;
  raw.forEach((r, i) => {
    if (!r) return;
    const shell = JSON.parse(r) as CachedShell;
    out.set(want[i], shell);
    if (keep) local.set(want[i], shell, now);
  });
  return out;
}
export function version(d: Pick<StatusDoc, 'editedAt'>): string | null {
  return d.editedAt ? d.editedAt.toISOString() : null;
}
/**
 * The viewer-independent rendering of `docs`, in the key order renderStatus and the spliced JSON
 * keep (`reblog` last): one query per kind of related record, whatever the number of statuses.
 * `justPosted`: made by this request, so no preview card yet (the link-previews pipeline attaches
 * it after the event, and drops the rendering then).
 */
async function renderShells(core: Core, docs: StatusDoc[], justPosted: boolean): Promise<Shell[]> {
  const accountIds = [...new Set(docs.map((s) => s.accountId))];
  const appIds = [...new Set(docs.map((s) => s.applicationId).filter((a): a is Id => a !== null))];
  const pollIds = docs.map((s) => s.pollId).filter((p): p is Id => p !== null);
  const [authors, media, apps, pollDocs, cards] = await Promise.all([
    readThrough(core, accountView, accountIds),
    loadAttachments(core, [...new Set(docs.flatMap((s) => s.mediaIds))]),
    appIds.length ? findApps(core, appIds) : new Map<bigint, never>(),
    pollIds.length
      ? collection(core.db, polls)
          .find({ _id: { $in: pollIds } }, { projection: { options: 1 } })
          .toArray()
      : [],
    justPosted
      ? new Map<bigint, never>()
      : loadStatusCards(
          core,
          docs.map((s) => s._id),
        ),
  ]);
  const mediaById = new Map(media.map((m) => [m._id, presentMediaAttachment(core, m)]));
  const pollOptions = new Map(pollDocs.map((p) => [p._id, p.options]));
  return Promise.all(
    docs.map(async (s) => {
      const card = cards.get(s._id);
      const shell: Shell = {
        id: String(s._id),
        uri: s.uri,
        url: s.url,
        created_at: s.createdAt.toISOString(),
        edited_at: version(s),
        visibility: s.visibility,
        sensitive: s.sensitive,
        spoiler_text: s.spoilerText,
        media_attachments: s.mediaIds.map((id) => mediaById.get(id)).filter((m) => m !== undefined),
        mentions: s.mentions.map(presentMention),
        tags: s.tags.map((t) => presentStatusTag(core.config, t)),
        emojis: await emojisInTexts(
          core,
          [s.spoilerText, s.content, ...(s.pollId === null ? [] : (pollOptions.get(s.pollId) ?? []))],
          authors.get(s.accountId)?.domain ?? null,
        ),
        in_reply_to_id: s.inReplyToId === null ? null : String(s.inReplyToId),
        in_reply_to_account_id: s.inReplyToAccountId === null ? null : String(s.inReplyToAccountId),
        card: card ? presentPreviewCard(card) : null,
        language: s.language,
        content: s.content,
        reblog: null,
      };
      const app = s.applicationId === null ? undefined : apps.get(s.applicationId);
      if (!app) return shell;
      // `application` before `reblog`, which stays the last key.
      const { reblog, ...rest } = shell;
      return { ...rest, application: { name: app.name, website: app.website }, reblog };
    }),
  );
}
/**
 * Renders the statuses of `ids` (unknown or deleted ones are skipped) and caches them; `known`
 * documents are not read again.
 */
export async function renderMisses(
  core: Core,
  ids: Id[],
  known: ReadonlyMap<bigint, StatusDoc>,
  justPosted = false,
): Promise<Map<bigint, CachedShell>> {
  const out = new Map<bigint, CachedShell>();
  if (ids.length === 0) return out;
  const drops = renderDropCount(core.db);
  const toRead = ids.filter((id) => !known.has(id));
  const docs = [
    ...ids.map((id) => known.get(id)).filter((d): d is StatusDoc => d !== undefined),
    ...(toRead.length === 0
      ? []
      : await collection(core.db, statuses)
          .find({ _id: { $in: toRead } })
          .toArray()),
  ];
  const rendered = await renderShells(core, docs, justPosted);
  const entries = docs.map((d, i): CachedShell => ({
    v: version(d),
    r: d.reblogOfId === null ? null : String(d.reblogOfId),
    s: rendered[i],
  }));
  const pipe = batch(core.redis);
  docs.forEach((d, i) => {
    out.set(d._id, entries[i]);
    // NX: a tombstone (renderCache.ts) means the status changed while this render read it.
    pipe.set(shellKey(d._id), JSON.stringify(entries[i]), 'EX', SHELL_TTL_SECONDS, 'NX');
  });
  const storing = pipe.exec().then((stored) => {
    // This process keeps only what Redis took, and only if nothing was dropped here meanwhile
    // (the drop's tombstone may not have reached Redis yet).
    if (renderDropCount(core.db) !== drops) return;
    const local = localRenderingsOf(core.db);
    docs.forEach((d, i) => {
      if (stored?.[i]?.[1] === 'OK') local.set(d._id, entries[i]);
    });
  });
  // A post's answer does not wait for its rendering to be stored: a reader that misses it renders
  // it again (the same bytes; the first SET wins; ADR 0022).
  if (justPosted)
    void storing.catch((err: unknown) => core.logger.debug({ err }, 'rendering of a new post not cached'));
  else await storing;
  return out;
}
/**
 * The role ids of the users behind `accountIds` (null: no role, or not a local user). Cached: a
 * user's role changes only through changeRole, which drops the entry. This process keeps what it
 * read for a few seconds, as it keeps the rendered authors the badges go on (one MGET of 20 keys
 * less per page); changeRole drops its own copy at once.
 */
export async function roleIdsOf(core: Core, accountIds: Id[]): Promise<Map<bigint, Id | null>> {
  const out = new Map<bigint, Id | null>();
  if (accountIds.length === 0) return out;
  const local = localRoleIdsOf(core.db);
  const now = Date.now();
  const keep = (id: Id, roleId: Id | null): void => local.set(id, roleId, now);
  const want: Id[] = [];
  for (const id of accountIds) {
    const hit = local.get(id, now);
    if (hit !== undefined) out.set(id, hit);
    else want.push(id);
  }
  if (want.length === 0) return out;
  const cached = await mgetAcrossSlots(core.redis, want.map(roleKey));
  const missing: Id[] = [];
  want.forEach((id, i) => {
    const c = cached[i];
    if (c === null) return void missing.push(id);
    const roleId = c === '' ? null : BigInt(c);
    out.set(id, roleId);
    keep(id, roleId);
  });
  if (missing.length === 0) return out;
  const found = await collection(core.db, users)
    .find({ accountId: { $in: missing } }, { projection: { accountId: 1, roleId: 1 } })
    .toArray();
  const pipe = batch(core.redis);
  for (const id of missing) {
    const roleId = found.find((u) => u.accountId === id)?.roleId ?? null;
    out.set(id, roleId);
    pipe.set(roleKey(id), roleId === null ? '' : String(roleId), 'EX', ROLE_TTL_SECONDS);
  }
  await pipe.exec();
  // Kept only once stored: a changeRole racing this read drops the Redis entry after it.
  for (const id of missing) keep(id, out.get(id) ?? null);
  return out;
}
