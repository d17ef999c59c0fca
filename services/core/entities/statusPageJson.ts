// A page of statuses as the JSON text the timelines send, spliced from cached pieces: the same
// bytes as JSON.stringify(presentStatusPage(...)), without building each status as an object and
// serialising it again. The viewer-independent part of a status (its cached rendering, "shell")
// and each author's Account are serialised once per cached copy (they are kept for a few seconds,
// statusPage.ts) and reused by every request until then; only the counts, poll and the viewer's
// flags are written per request. Building and stringifying 20 statuses with their accounts was
// most of a timeline request's garbage, which kept the API's young-generation collector busy.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import type { CachedAccount } from '../model/accounts.ts';
import type { EffectiveRole } from '../roles/roles.ts';
import type { Account } from './account.ts';
import type { Status } from './status.ts';
import {
  authorEntity,
  loadStatusPage,
  renderStatus,
  viewerFields,
  type CachedShell,
  type Live,
  type LoadedPage,
  type PageOptions,
} from './statusPage.ts';

/** Fields renderStatus lays over the shell; a shell holding one of them is rendered as an object. */
const LAID_OVER = new Set([
  'account',
  'reblogs_count',
  'favourites_count',
  'replies_count',
  'poll',
  'favourited',
  'reblogged',
  'muted',
  'bookmarked',
  'filtered',
  'pinned',
]);

/**
 * The shell's JSON without `reblog` and the closing brace, or null when it cannot be spliced (its
 * `reblog` is not its last field, where the object spread would keep it, or it holds a laid-over
 * field). Per cached copy: a WeakMap, so it goes with the copy.
 */
const shellTexts = new WeakMap<CachedShell, string | null>();

function shellText(entry: CachedShell): string | null {
  let text = shellTexts.get(entry);
  if (text !== undefined) return text;
  const keys = Object.keys(entry.s);
  text = null;
  if (keys.length > 1 && keys.at(-1) === 'reblog' && !keys.some((k) => LAID_OVER.has(k))) {
    const { reblog: _reblog, ...rest } = entry.s;
    text = JSON.stringify(rest).slice(0, -1);
  }
  shellTexts.set(entry, text);
  return text;
}

/** Each author entity's JSON, per role laid over it (remote authors: `null`, the entity as is). */
const accountTexts = new WeakMap<Account, Map<EffectiveRole | null, string>>();

function accountText(page: LoadedPage, accountId: Id): string {
  const a = page.authors.get(accountId) as { entity: Account; role: EffectiveRole | null };
  let byRole = accountTexts.get(a.entity);
  if (!byRole) accountTexts.set(a.entity, (byRole = new Map()));
  let text = byRole.get(a.role);
  if (text === undefined) {
    text = JSON.stringify(authorEntity(page, accountId));
    // Roles are few and cached objects; a bound keeps a role object renewed every minute or so
    // from growing the map while the entity lives.
    if (byRole.size >= 8) byRole.clear();
    byRole.set(a.role, text);
  }
  return text;
}

/** The fields after `reblog`, as renderStatus orders them, and the closing brace. */
function tailText(page: LoadedPage, l: Live, nested: boolean): string {
  const poll = l.pollId === null ? null : (page.polls.get(l.pollId) ?? null);
  let out =
    `,"account":${accountText(page, l.accountId)}` +
    `,"reblogs_count":${JSON.stringify(l.reblogsCount)}` +
    `,"favourites_count":${JSON.stringify(l.favouritesCount)}` +
    `,"replies_count":${JSON.stringify(l.repliesCount)}` +
    `,"poll":${JSON.stringify(poll)}`;
  const own = viewerFields(page, l, nested);
  if (own) {
    out +=
      `,"favourited":${own.favourited},"reblogged":${own.reblogged},"muted":${own.muted}` +
      `,"bookmarked":${own.bookmarked},"filtered":${own.filtered.length === 0 ? '[]' : JSON.stringify(own.filtered)}`;
    if (own.pinned !== undefined) out += `,"pinned":${own.pinned}`;
  }
  return `${out}}`;
}

/** One status as JSON, its `reblog` being `reblog`; null when its shell cannot be spliced. */
function statusText(page: LoadedPage, l: Live, nested: boolean, reblog: string): string | null {
  const head = shellText(page.shells.get(l._id) as CachedShell);
  return head === null ? null : `${head},"reblog":${reblog}${tailText(page, l, nested)}`;
}

/** One status with its reblogged original, as JSON. */
function itemText(page: LoadedPage, status: Live, original: Live | null): string {
  const inner = original === null ? 'null' : statusText(page, original, true, 'null');
  const text = inner === null ? null : statusText(page, status, false, inner);
  if (text !== null) return text;
  // Not spliceable: the object, as presentStatusPage makes it.
  const out: Status = renderStatus(page, status, false);
  if (original) out.reblog = renderStatus(page, original, true);
  return JSON.stringify(out);
}

/** JSON.stringify(await presentStatusPage(core, ids, viewer, opts)), built from cached pieces. */
export async function presentStatusPageJson(
  core: Core,
  ids: Id[],
  viewer: CachedAccount | null,
  opts: PageOptions,
): Promise<string> {
  const page = await loadStatusPage(core, ids, viewer, opts);
  const parts: string[] = [];
  for (const { status, original } of page.items) parts.push(itemText(page, status, original));
  return `[${parts.join(',')}]`;
}
