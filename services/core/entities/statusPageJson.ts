// A page of statuses as the JSON text the timelines send, spliced from cached pieces: the same
// bytes as JSON.stringify(presentStatusPage(...)), without building each status as an object and
// serialising it again. The viewer-independent part of a status (its cached rendering, "shell")
// and each author's Account are serialised once per cached copy (they are kept for a few seconds,
// statusPage.ts) and reused by every request until then; only the counts, poll and the viewer's
// flags are written per request. Building and stringifying 20 statuses with their accounts was
// most of a timeline request's garbage, which kept the API's young-generation collector busy.
// The cached pieces are kept as UTF-8 bytes and the page is sent as a Buffer: encoding the page's
// text (and measuring it for Content-Length) on every send was a tenth of a timeline request.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import type { CachedAccount } from '../model/accounts.ts';
import type { EffectiveRole } from '../roles/roles.ts';
import type { Account } from './account.ts';
import type { QuoteApproval } from '../quotes/policy.ts';
import { loadStatusPage, type Live, type LoadedPage, type PageOptions } from './statusPage.ts';
import { type CachedShell } from './statusShells.ts';
import { authorEntity, quoteApprovalOf, quoteOf, renderItem, viewerFields } from './statusRender.ts';

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
 * A page's JSON as bytes: the cached pieces as they are, the text written per request joined into
 * one string between two of them (encoded once, when the page is put together).
 */
class JsonBytes {
  private readonly chunks: (string | Buffer)[] = [];
  private run: string[] = [];

  text(...pieces: string[]): void {
    for (const p of pieces) this.run.push(p);
  }

  bytes(b: Buffer): void {
    this.endRun();
    this.chunks.push(b);
  }

  toBuffer(): Buffer {
    this.endRun();
    let size = 0;
    for (const c of this.chunks) size += typeof c === 'string' ? Buffer.byteLength(c) : c.length;
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    for (const c of this.chunks) at += typeof c === 'string' ? out.write(c, at) : c.copy(out, at);
    return out;
  }

  private endRun(): void {
    if (this.run.length === 0) return;
    this.chunks.push(this.run.join(''));
    this.run = [];
  }
}

/**
 * The shell's JSON without `reblog` and the closing brace, or null when it cannot be spliced (its
 * `reblog` is not its last field, where the object spread would keep it, or it holds a laid-over
 * field). Per cached copy: a WeakMap, so it goes with the copy.
 */
const shellBytesOf = new WeakMap<CachedShell, Buffer | null>();

function shellBytes(entry: CachedShell): Buffer | null {
  let bytes = shellBytesOf.get(entry);
  if (bytes !== undefined) return bytes;
  const keys = Object.keys(entry.s);
  bytes = null;
  if (keys.length > 1 && keys.at(-1) === 'reblog' && !keys.some((k) => LAID_OVER.has(k))) {
    const { reblog: _reblog, ...rest } = entry.s;
    bytes = Buffer.from(JSON.stringify(rest).slice(0, -1));
  }
  shellBytesOf.set(entry, bytes);
  return bytes;
}

/** Each author entity's JSON, per role laid over it (remote authors: `null`, the entity as is). */
const accountBytesOf = new WeakMap<Account, Map<EffectiveRole | null, Buffer>>();

function accountBytes(page: LoadedPage, accountId: Id): Buffer {
  const a = page.authors.get(accountId) as { entity: Account; role: EffectiveRole | null };
  let byRole = accountBytesOf.get(a.entity);
  if (!byRole) accountBytesOf.set(a.entity, (byRole = new Map()));
  let text = byRole.get(a.role);
  if (text === undefined) {
    text = Buffer.from(JSON.stringify(authorEntity(page, accountId)));
    // Roles are few and cached objects; a bound keeps a role object renewed every minute or so
    // from growing the map while the entity lives.
    if (byRole.size >= 8) byRole.clear();
    byRole.set(a.role, text);
  }
  return text;
}

/** `quote_approval` as JSON, by policy and decision: the few combinations a page has, serialised once. */
const approvalTexts = new Map<string, string>();

function approvalText(approval: QuoteApproval, policy: number): string {
  const key = `${policy}:${approval.current_user}`;
  let text = approvalTexts.get(key);
  if (text === undefined) {
    text = JSON.stringify(approval);
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
 * into the page's runs and are joined once: concatenating them here would make a rope of
 * intermediate strings per status.
 */
function pushTail(parts: JsonBytes, page: LoadedPage, l: Live, nested: boolean): void {
  const poll = l.pollId === null ? null : (page.polls.get(l.pollId) ?? null);
  parts.text(',"account":');
  parts.bytes(accountBytes(page, l.accountId));
  parts.text(
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
  parts.text(
    ',"quote":',
    quote === null ? 'null' : JSON.stringify(quote),
    ',"quotes_count":',
    count(l.reblogOfId === null ? (l.quotesCount ?? 0) : 0),
    ',"quote_approval":',
    approvalText(quoteApprovalOf(page, l, original), (original ?? l).quoteApprovalPolicy ?? 0),
  );
  const own = viewerFields(page, l, nested);
  if (own) {
    parts.text(
      own.favourited ? ',"favourited":true' : ',"favourited":false',
      own.reblogged ? ',"reblogged":true' : ',"reblogged":false',
      own.muted ? ',"muted":true' : ',"muted":false',
      own.bookmarked ? ',"bookmarked":true' : ',"bookmarked":false',
      ',"filtered":',
      own.filtered.length === 0 ? '[]' : JSON.stringify(own.filtered),
    );
    if (own.pinned !== undefined) parts.text(own.pinned ? ',"pinned":true' : ',"pinned":false');
  }
  parts.text('}');
}

/** Pushes one status with its reblogged original, as JSON. */
function pushItem(parts: JsonBytes, page: LoadedPage, status: Live, original: Live | null): void {
  const head = shellBytes(page.shells.get(status._id) as CachedShell);
  const inner = original === null ? undefined : shellBytes(page.shells.get(original._id) as CachedShell);
  if (head === null || inner === null) {
    // Not spliceable: the object, as presentStatusPage makes it.
    parts.text(JSON.stringify(renderItem(page, { status, original })));
    return;
  }
  parts.bytes(head);
  parts.text(',"reblog":');
  if (original === null || inner === undefined) parts.text('null');
  else {
    parts.bytes(inner);
    parts.text(',"reblog":null');
    pushTail(parts, page, original, true);
  }
  pushTail(parts, page, status, false);
}

/** JSON.stringify(await presentStatusPage(core, ids, viewer, opts)) as UTF-8, built from cached pieces. */
export async function presentStatusPageJson(
  core: Core,
  ids: Id[],
  viewer: CachedAccount | null,
  opts: PageOptions,
): Promise<Buffer> {
  const page = await loadStatusPage(core, ids, viewer, opts);
  const parts = new JsonBytes();
  parts.text('[');
  page.items.forEach(({ status, original }, i) => {
    if (i > 0) parts.text(',');
    pushItem(parts, page, status, original);
  });
  parts.text(']');
  return parts.toBuffer();
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
): Promise<Buffer | null> {
  const page = await loadStatusPage(core, [id], viewer, opts);
  const item = page.items[0];
  if (!item) return null;
  const parts = new JsonBytes();
  if (item.original === null) pushItem(parts, page, item.status, null);
  else parts.text(JSON.stringify(renderItem(page, item, true)));
  return parts.toBuffer();
}
