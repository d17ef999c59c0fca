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
import { quoteApprovalFor, type QuoteDecision } from '../quotes/policy.ts';
import { loadStatusPage, type Live, type LoadedPage, type PageOptions } from './statusPage.ts';
import { type CachedShell } from './statusShells.ts';
import { authorEntity, quoteDecisionOf, quoteOf, renderItem, viewerFields } from './statusRender.ts';

/** Fields renderStatus lays over the shell; a shell holding one of them is rendered as an object. */
const LAID_OVER = new Set([
  'account',
  'reblogs_count',
  'favourites_count',
  'replies_count',
  'poll',
  'quote',
  'quotes_count',
  'quote_approval',
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

/** `quote_approval` as JSON, by policy and decision: the few combinations a page has, serialised once. */
const approvalTexts = new Map<number, string>();
const DECISIONS: readonly QuoteDecision[] = ['automatic', 'manual', 'unknown', 'denied'];

function approvalText(policy: number, decision: QuoteDecision): string {
  // A number key: no string built per status.
  const key = policy * 4 + DECISIONS.indexOf(decision);
  let text = approvalTexts.get(key);
  if (text === undefined) {
    text = JSON.stringify(quoteApprovalFor(policy, decision));
    if (approvalTexts.size >= 256) approvalTexts.clear();
    approvalTexts.set(key, text);
  }
  return text;
}

/** A count as JSON (String uses V8's number-string cache; JSON.stringify's null for NaN stays). */
function count(n: number): string {
  return Number.isFinite(n) ? String(n) : JSON.stringify(n);
}

/**
 * Pushes the fields after `reblog`, as renderStatus orders them, and the closing brace. Pieces go
 * into the page's one array and are joined once: concatenating them here would make a rope of
 * intermediate strings per status.
 */
function pushTail(parts: string[], page: LoadedPage, l: Live, nested: boolean): void {
  const poll = l.pollId === null ? null : (page.polls.get(l.pollId) ?? null);
  parts.push(
    ',"account":',
    accountText(page, l.accountId),
    ',"reblogs_count":',
    count(l.reblogsCount),
    ',"favourites_count":',
    count(l.favouritesCount),
    ',"replies_count":',
    count(l.repliesCount),
    ',"poll":',
    poll === null ? 'null' : JSON.stringify(poll),
  );
  // Quote posts: most statuses quote nothing and carry the same approval for a viewer.
  const quote = quoteOf(page, l);
  const original = l.reblogOfId === null ? null : (page.live?.get(l.reblogOfId) ?? null);
  parts.push(
    ',"quote":',
    quote === null ? 'null' : JSON.stringify(quote),
    ',"quotes_count":',
    count(l.reblogOfId === null ? (l.quotesCount ?? 0) : 0),
    ',"quote_approval":',
    approvalText((original ?? l).quoteApprovalPolicy ?? 0, quoteDecisionOf(page, l, original)),
  );
  const own = viewerFields(page, l, nested);
  if (own) {
    parts.push(
      own.favourited ? ',"favourited":true' : ',"favourited":false',
      own.reblogged ? ',"reblogged":true' : ',"reblogged":false',
      own.muted ? ',"muted":true' : ',"muted":false',
      own.bookmarked ? ',"bookmarked":true' : ',"bookmarked":false',
      ',"filtered":',
      own.filtered.length === 0 ? '[]' : JSON.stringify(own.filtered),
    );
    if (own.pinned !== undefined) parts.push(own.pinned ? ',"pinned":true' : ',"pinned":false');
  }
  parts.push('}');
}

/** Pushes one status with its reblogged original, as JSON. */
function pushItem(parts: string[], page: LoadedPage, status: Live, original: Live | null): void {
  const head = shellText(page.shells.get(status._id) as CachedShell);
  const inner = original === null ? '' : shellText(page.shells.get(original._id) as CachedShell);
  if (head === null || inner === null) {
    // Not spliceable: the object, as presentStatusPage makes it.
    parts.push(JSON.stringify(renderItem(page, { status, original })));
    return;
  }
  parts.push(head, ',"reblog":');
  if (original === null) parts.push('null');
  else {
    parts.push(inner, ',"reblog":null');
    pushTail(parts, page, original, true);
  }
  pushTail(parts, page, status, false);
}

/** JSON.stringify(await presentStatusPage(core, ids, viewer, opts)), built from cached pieces. */
export async function presentStatusPageJson(
  core: Core,
  ids: Id[],
  viewer: CachedAccount | null,
  opts: PageOptions,
): Promise<string> {
  const page = await loadStatusPage(core, ids, viewer, opts);
  const parts: string[] = ['['];
  page.items.forEach(({ status, original }, i) => {
    if (i > 0) parts.push(',');
    pushItem(parts, page, status, original);
  });
  parts.push(']');
  return parts.join('');
}

/**
 * One status as `GET /api/v1/statuses/:id` answers it, from the caches the timelines read; null
 * when it does not exist or the viewer may not see it. A reblog wrapper on its own shows its
 * original's flags (viewerFields' properFlags), written as an object.
 */
export async function presentStatusJson(
  core: Core,
  id: Id,
  viewer: CachedAccount | null,
  opts: PageOptions = { check: 'policy' },
): Promise<string | null> {
  const page = await loadStatusPage(core, [id], viewer, opts);
  const item = page.items[0];
  if (!item) return null;
  if (item.original === null) {
    const parts: string[] = [];
    pushItem(parts, page, item.status, null);
    return parts.join('');
  }
  return JSON.stringify(renderItem(page, item, true));
}
