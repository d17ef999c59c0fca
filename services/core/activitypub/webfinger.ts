// WebFinger as a client (federation reference §1.2): `acct:user@domain` → the actor id from the
// `self` link whose type is exactly one of the two ActivityPub types. Unsigned GET through
// safeFetch; with FEDERATION_ALLOW_HTTP, a domain whose https:// endpoint cannot be reached is
// tried over http:// (servers on one machine in tests and development). A subject naming another
// acct is followed once (Mastodon's redirect rule).
import type { Core } from '../context.ts';
import { FetchError, safeFetch } from './safeFetch.ts';
import { asArray, obj, parseJsonObject } from './json.ts';

export const AP_LINK_TYPES: ReadonlySet<string> = new Set([
  'application/activity+json',
  'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
]);

export interface WebfingerResult {
  subject: string;
  /** The actor id (the `self` link). */
  actor: string;
  /** `user` and `domain` of the subject. */
  username: string;
  domain: string;
}

export class WebfingerError extends Error {
  /** 404/410 from the server, or null for other failures. */
  readonly status: number | null;
  constructor(message: string, status: number | null = null) {
    super(message);
    this.name = 'WebfingerError';
    this.status = status;
  }
}

function splitAcct(acct: string): { username: string; domain: string } | null {
  const m = /^(?:acct:)?@?([^@\s/]+)@([^@\s/]+)$/i.exec(acct.trim());
  return m ? { username: m[1], domain: m[2].toLowerCase() } : null;
}

async function fetchJrd(core: Core, domain: string, resource: string): Promise<Record<string, unknown>> {
  const path = `/.well-known/webfinger?resource=${encodeURIComponent(resource)}`;
  const headers = { accept: 'application/jrd+json, application/json' };
  let res;
  try {
    res = await safeFetch(core.config, `https://${domain}${path}`, { headers, timeoutMs: 10_000 });
  } catch (err) {
    // Only a transport failure falls back (a refused address stays refused).
    const fallback =
      core.config.federation.allowHttp &&
      err instanceof FetchError &&
      (err.reason === 'network' || err.reason === 'timeout');
    if (!fallback) throw err;
    res = await safeFetch(core.config, `http://${domain}${path}`, { headers, timeoutMs: 10_000 });
  }
  if (res.status === 404 || res.status === 410)
    throw new WebfingerError(`WebFinger answered ${res.status}`, res.status);
  if (res.status !== 200) throw new WebfingerError(`WebFinger answered ${res.status}`);
  const doc = parseJsonObject(res.body.toString('utf8'));
  if (!doc) throw new WebfingerError('WebFinger answer is not a JSON object');
  return doc;
}

function parseJrd(doc: Record<string, unknown>): WebfingerResult {
  const subject = typeof doc.subject === 'string' ? doc.subject : '';
  const parts = splitAcct(subject);
  if (!parts) throw new WebfingerError('WebFinger subject is not acct:user@domain');
  const self = asArray(doc.links)
    .map(obj)
    .find((l) => l !== null && l.rel === 'self' && typeof l.type === 'string' && AP_LINK_TYPES.has(l.type));
  const href = self && typeof self.href === 'string' ? self.href : null;
  if (!href || !/^https?:\/\//i.test(href)) throw new WebfingerError('WebFinger answer has no ActivityPub self link');
  return { subject: `acct:${parts.username}@${parts.domain}`, actor: href, ...parts };
}

/** Looks an acct (`user@domain`, with or without `acct:`/`@`) up on its server. */
export async function webfinger(core: Core, acct: string): Promise<WebfingerResult> {
  const parts = splitAcct(acct);
  if (!parts) throw new WebfingerError('not an acct: user@domain');
  const resource = `acct:${parts.username}@${parts.domain}`;
  const first = parseJrd(await fetchJrd(core, parts.domain, resource));
  if (first.subject.toLowerCase() === resource.toLowerCase()) return first;
  // The answer names another handle (split domains): ask that handle's server once, it must agree.
  const second = parseJrd(await fetchJrd(core, first.domain, first.subject));
  if (second.subject.toLowerCase() !== first.subject.toLowerCase())
    throw new WebfingerError('WebFinger subjects do not agree');
  return second;
}
