// Profile field link verification as Mastodon does it (Account::Field#verifiable?,
// VerifyLinkService, VerifyAccountLinksWorker): a field whose value is an https URL with a plain,
// already normalised host and path is fetched (the SSRF-safe client, 1 MiB, no credentials), and
// it is verified when the page has an `<a>` or `<link>` with `rel="me"` whose href is the account's
// profile URL, or whose first such link redirects there. A verification holds while the value
// stays the same (profile.ts keeps it across edits). Remote accounts' fields are checked the same
// way against their own profile URL, the link taken from the field's HTML as Mastodon does
// (Account::Field#extract_url_from_html: a lone `<a>` whose text is its href).
import { Parser } from 'htmlparser2';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc, type ProfileField } from '../model/accounts.ts';
import { FetchError, safeFetch } from '../activitypub/safeFetch.ts';

const PAGE_MAX_BYTES = 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

/**
 * The URL to check for a field's value, or null when Mastodon would not check it: https only
 * (plain http too where FEDERATION_ALLOW_HTTP allows it, as in tests), no user or password, and a
 * host and path that normalising would not change (no IDN or upper case host, no dot segments).
 */
export function verifiableUrl(value: string, allowHttp: boolean): string | null {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)/i.exec(value);
  if (!m) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) return null;
  if (url.username || url.password || !url.hostname || m[2].includes('@')) return null;
  const rawHost = m[2].replace(/:\d+$/, '');
  if (rawHost !== url.hostname) return null;
  if (m[3] !== '' && m[3] !== url.pathname) return null;
  return url.href;
}

/** The hrefs of the page's `<a rel="me">` and `<link rel="me">`, in document order. */
export function relMeLinks(html: string): string[] {
  const found: string[] = [];
  const parser = new Parser({
    onopentag(name, attribs) {
      if (name !== 'a' && name !== 'link') return;
      const rel = (attribs.rel ?? '').toLowerCase().split(/\s+/);
      if (rel.includes('me') && attribs.href !== undefined) found.push(attribs.href.trim());
    },
  });
  parser.write(html);
  parser.end();
  return found;
}

/** The link of a remote field's HTML value: a lone `<a>` whose text is its href; null otherwise. */
export function remoteFieldUrl(html: string): string | null {
  let depth = 0;
  let topLevel = 0;
  let href: string | null = null;
  let text = '';
  let stray = false;
  const parser = new Parser({
    onopentag(name, attribs) {
      if (depth === 0) {
        topLevel += 1;
        if (name === 'a') href = attribs.href ?? null;
        else stray = true;
      }
      depth += 1;
    },
    ontext(data) {
      if (depth === 0) stray ||= data.trim() !== '';
      else text += data;
    },
    onclosetag() {
      depth -= 1;
    },
  });
  parser.write(html);
  parser.end();
  if (stray || topLevel !== 1 || href === null) return null;
  return href === text ? href : null;
}

/** The URL a field would be checked at, or null (local: the typed value; remote: its lone link). */
function fieldUrl(core: Core, account: AccountDoc, i: number): string | null {
  const value =
    account.domain === null ? account.fieldsSource[i]?.value : remoteFieldUrl(account.fields[i]?.value ?? '');
  return value ? verifiableUrl(value, core.config.federation.allowHttp) : null;
}

/** Mastodon's Account::Field#requires_verification?: some field is verifiable and not verified yet. */
export function needsLinkVerification(core: Core, account: AccountDoc): boolean {
  return account.fields.some((f, i) => !f.verifiedAt && fieldUrl(core, account, i) !== null);
}

/** A remote account's refreshed fields keep the verification of a value that did not change. */
export function keepVerifications(before: readonly ProfileField[], after: ProfileField[]): ProfileField[] {
  return after.map((f) => ({ ...f, verifiedAt: before.find((o) => o.value === f.value)?.verifiedAt ?? null }));
}

async function fetchPage(core: Core, url: string): Promise<string | null> {
  try {
    const res = await safeFetch(core.config, url, {
      headers: { accept: 'text/html' },
      maxBytes: PAGE_MAX_BYTES,
      timeoutMs: FETCH_TIMEOUT_MS,
    });
    return res.status === 200 ? res.body.toString('utf8') : null;
  } catch (err) {
    if (err instanceof FetchError) return null;
    throw err;
  }
}

/** Where `url` redirects to, without following it (Mastodon asks with a HEAD). */
async function redirectTarget(core: Core, url: string): Promise<string | null> {
  try {
    const res = await safeFetch(core.config, url, {
      maxRedirects: 0,
      maxBytes: 64 * 1024,
      timeoutMs: FETCH_TIMEOUT_MS,
    });
    return res.headers.location ?? null;
  } catch (err) {
    if (err instanceof FetchError) return null;
    throw err;
  }
}

/** Whether the page at `url` links back to `linkBack` with rel="me". */
export async function linksBack(core: Core, url: string, linkBack: string): Promise<boolean> {
  const html = await fetchPage(core, url);
  if (!html) return false;
  const links = relMeLinks(html);
  if (links.some((href) => href.toLowerCase() === linkBack.toLowerCase())) return true;
  if (links.length === 0 || !links[0]) return false;
  let first: string;
  try {
    first = new URL(links[0], url).href;
  } catch {
    return false;
  }
  return (await redirectTarget(core, first)) === linkBack;
}

/** Checks each unverified, verifiable field of an account; how many were verified now. */
export async function verifyAccountLinks(core: Core, accountId: Id): Promise<number> {
  const coll = collection(core.db, accounts);
  const account = await coll.findOne({ _id: accountId });
  if (!account || account.suspendedAt || !account.url) return 0;
  let verified = 0;
  for (const [i, field] of account.fields.entries()) {
    if (field.verifiedAt) continue;
    const url = fieldUrl(core, account, i);
    if (!url || !(await linksBack(core, url, account.url))) continue;
    // Only while the field still has the value that was checked (an edit may have come meanwhile).
    const unchanged =
      account.domain === null
        ? { [`fieldsSource.${i}.value`]: account.fieldsSource[i]?.value }
        : { [`fields.${i}.value`]: field.value };
    const res = await coll.updateOne(
      { _id: accountId, ...unchanged },
      { $set: { [`fields.${i}.verifiedAt`]: new Date() } },
    );
    verified += res.modifiedCount;
  }
  if (verified > 0) core.logger.info({ accountId: String(accountId), verified }, 'profile links verified');
  return verified;
}
