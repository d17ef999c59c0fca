// One signed POST of an activity to an inbox, the way Mastodon delivers (federation reference §7.1,
// §9.1): draft-cavage signature over (request-target) host date digest content-type, the body as
// application/activity+json. Connections come from one undici Agent per process: a keep-alive pool
// per origin, a connect timeout, no redirects (undici follows none unless asked), and a DNS lookup
// that refuses private, loopback and link-local addresses unless ALLOWED_PRIVATE_ADDRESSES lets
// them through (checked on the address actually connected to, so DNS rebinding cannot slip past).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, errors as undiciErrors } from 'undici';
import type { Config } from '../../config.ts';
import type { SigningKey } from '../keys.ts';
import { signRequest } from '../httpSignatures.ts';
import { checkRemoteUrl, isAllowedAddress } from '../safeFetch.ts';
import type { DeliverySettings } from './settings.ts';

export const ACTIVITY_CONTENT_TYPE = 'application/activity+json';

/** What became of one attempt. */
export type DeliveryResult =
  | { kind: 'delivered'; status: number }
  /** Final: not retried (4xx other than 408/429, 501, a refused address or URL). */
  | { kind: 'rejected'; status: number | null; class: string; gone: boolean }
  /** Retried later, after `retryAfterMs` when the server said so. */
  | { kind: 'failed'; status: number | null; class: string; retryAfterMs: number | null };

class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
}

/** A lookup for net.connect that only yields addresses we may connect to. */
function guardedLookup(config: Config) {
  return (
    hostname: string,
    options: { family?: number | string; all?: boolean } | number,
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const opts = typeof options === 'number' ? { family: options } : options;
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const allowed = addresses.filter((a) => isAllowedAddress(config, a.address));
      if (allowed.length === 0)
        return callback(new RefusedAddressError(`${hostname} resolves to a non-public address`), []);
      if (opts.all) return callback(null, allowed);
      callback(null, allowed[0].address, allowed[0].family);
    });
  };
}

export interface DeliveryClient {
  deliver(inbox: string, body: string, key: SigningKey): Promise<DeliveryResult>;
  close(): Promise<void>;
}

/** Seconds or an HTTP date, as ms from now; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

/** Mastodon's rule (§9.1), with the issue's: 4xx other than 408 and 429 is final, and so is 501. */
export function classifyStatus(status: number, retryAfterMs: number | null): DeliveryResult {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 429) return { kind: 'failed', status, class: 'http_429', retryAfterMs };
  if (status === 408) return { kind: 'failed', status, class: 'timeout', retryAfterMs: null };
  if (status >= 400 && status < 500) return { kind: 'rejected', status, class: 'http_4xx', gone: status === 410 };
  if (status === 501) return { kind: 'rejected', status, class: 'http_5xx', gone: false };
  if (status >= 500)
    return { kind: 'failed', status, class: 'http_5xx', retryAfterMs: status === 503 ? retryAfterMs : null };
  // 1xx/3xx: a redirect is not followed for a POST; try again later like Mastodon does.
  return { kind: 'failed', status, class: 'other', retryAfterMs: null };
}

/** Failure class of a thrown network error. */
export function classifyError(err: unknown): { class: string; final: boolean } {
  const e = err as { code?: string; name?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  if (err instanceof RefusedAddressError || code === 'EREFUSEDADDRESS')
    return { class: 'refused_address', final: true };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return { class: 'timeout', final: false };
  if (err instanceof undiciErrors.ConnectTimeoutError) return { class: 'connect', final: false };
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError)
    return { class: 'timeout', final: false };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return { class: 'dns', final: false };
  if (/^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_)/.test(code)) return { class: 'tls', final: false };
  if (/^(ECONNREFUSED|ECONNRESET|EPIPE|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|UND_ERR)/.test(code))
    return { class: 'connect', final: false };
  return { class: 'other', final: false };
}

export function createDeliveryClient(config: Config, settings: DeliverySettings): DeliveryClient {
  // Like Mastodon's: software, version and a link back, which admins of the receiving side look for.
  const userAgent = `fedisrv/0.1 (+${config.baseUrl}/)`;
  const agent = new Agent({
    connections: settings.perHostConnections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    headersTimeout: settings.totalTimeoutMs,
    bodyTimeout: settings.totalTimeoutMs,
    connect: { timeout: settings.connectTimeoutMs, lookup: guardedLookup(config) },
  });

  async function deliver(inbox: string, body: string, key: SigningKey): Promise<DeliveryResult> {
    let url: URL;
    try {
      url = checkRemoteUrl(config, inbox);
    } catch {
      return { kind: 'rejected', status: null, class: 'refused_address', gone: false };
    }
    // An IP literal is connected to without a lookup: check it here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !isAllowedAddress(config, literal))
      return { kind: 'rejected', status: null, class: 'refused_address', gone: false };
    const headers = signRequest({
      method: 'POST',
      url,
      headers: { 'content-type': ACTIVITY_CONTENT_TYPE },
      body,
      key,
    });
    headers['user-agent'] = userAgent;
    headers.accept = `${ACTIVITY_CONTENT_TYPE}, application/ld+json`;
    try {
      const res = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(settings.totalTimeoutMs),
      });
      // Read (and drop) at most maxResponseBytes of the answer; a bigger one is cut off.
      let read = 0;
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read > settings.maxResponseBytes) {
          res.body.destroy();
          break;
        }
      }
      return classifyStatus(res.statusCode, parseRetryAfter(res.headers['retry-after']));
    } catch (err) {
      const c = classifyError(err);
      return c.final
        ? { kind: 'rejected', status: null, class: c.class, gone: false }
        : { kind: 'failed', status: null, class: c.class, retryAfterMs: null };
    }
  }

  return {
    deliver,
    // In-flight requests are cut off: a job whose answer is lost is sent again (once-only is
    // recorded only after an answer), which receivers tolerate.
    close: () => agent.destroy(),
  };
}
