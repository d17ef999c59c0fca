// The one HTTP client for requests to other servers (fetches and deliveries). Remote URLs are
// hostile input (federation reference §8.3): only http(s) (plain http only with
// FEDERATION_ALLOW_HTTP), the host is resolved here and every address checked against private,
// loopback, link-local and other special ranges (unless ALLOWED_PRIVATE_ADDRESSES allows it); the
// connection then goes to the checked address itself, so DNS cannot change between check and
// connect. Redirects are followed by hand (at most 3) and each hop is checked again; GETs are
// re-signed for the new URL. Bodies are capped (1 MiB by default) and every request has a deadline.
import http from 'node:http';
import https from 'node:https';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Config } from '../config.ts';
import type { SigningKey } from './keys.ts';
import { signRequest } from './httpSignatures.ts';

export type RefusalReason =
  | 'invalid-url'
  | 'scheme'
  | 'private-address'
  | 'unresolvable'
  | 'too-large'
  | 'timeout'
  | 'too-many-redirects'
  | 'connect'
  | 'network';

/** A request we would not make, or that failed before an HTTP answer. */
export class FetchError extends Error {
  readonly reason: RefusalReason;
  readonly url: string;
  constructor(reason: RefusalReason, url: string, message: string) {
    super(message);
    this.name = 'FetchError';
    this.reason = reason;
    this.url = url;
  }
}

const V4_SPECIAL = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const;

const V6_SPECIAL = [
  ['::', 96], // unspecified, loopback and IPv4-compatible addresses
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001::', 32],
  ['2001:10::', 28],
  ['2001:20::', 28],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const;

const special = new BlockList();
for (const [a, p] of V4_SPECIAL) special.addSubnet(a, p, 'ipv4');
for (const [a, p] of V6_SPECIAL) special.addSubnet(a, p, 'ipv6');

const allowLists = new Map<string, BlockList>();

function allowListFor(allowed: readonly string[]): BlockList {
  const key = allowed.join(',');
  let list = allowLists.get(key);
  if (!list) {
    list = new BlockList();
    for (const entry of allowed) {
      const [address, bits] = entry.split('/');
      list.addSubnet(address, Number(bits), isIP(address) === 6 ? 'ipv6' : 'ipv4');
    }
    allowLists.set(key, list);
  }
  return list;
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d or ::ffff:hhhh:hhhh) as its IPv4 address. */
function unmapped(ip: string): string {
  const lower = ip.toLowerCase();
  const dotted = lower.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) return dotted[1];
  const hex = lower.match(/^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  if (hex) {
    const hi = parseInt(hex[1], 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return ip;
}

/** Whether an IP address is private, loopback, link-local or otherwise not on the public internet. */
export function isSpecialAddress(ip: string): boolean {
  const addr = unmapped(ip);
  const family = isIP(addr);
  if (family === 0) return true;
  return special.check(addr, family === 6 ? 'ipv6' : 'ipv4');
}

/** Whether we may connect to this address: public, or allowed by ALLOWED_PRIVATE_ADDRESSES. */
export function isAllowedAddress(config: Config, ip: string): boolean {
  return isAddressAllowedBy(config.federation.allowedPrivateAddresses, ip);
}

/** The same check against an explicit list of allowed private networks ("address/prefix" entries). */
export function isAddressAllowedBy(allowedPrivate: readonly string[], ip: string): boolean {
  const addr = unmapped(ip);
  const family = isIP(addr);
  if (family === 0) return false;
  if (!isSpecialAddress(addr)) return true;
  return allowListFor(allowedPrivate).check(addr, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * Parses and checks a remote URL: http(s) only (http only when FEDERATION_ALLOW_HTTP), no user
 * info, no .onion/.i2p. The WHATWG parser already turns decimal, octal and hex IPv4 forms into
 * dotted quads, so the address check sees what the connection would use.
 */
export function checkRemoteUrl(config: Config, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FetchError('invalid-url', raw, 'not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && config.federation.allowHttp))
    throw new FetchError('scheme', raw, `scheme ${url.protocol} is not allowed`);
  if (url.username || url.password) throw new FetchError('invalid-url', raw, 'URLs with credentials are refused');
  const host = url.hostname.toLowerCase();
  if (host === '' || /\.(onion|i2p)\.?$/.test(host)) throw new FetchError('invalid-url', raw, 'host not reachable');
  return url;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of the URL's host we may connect to, IPv4 first; refuses when there is none. */
export async function resolveAllowedAddresses(config: Config, url: URL): Promise<ResolvedAddress[]> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  let candidates: Array<{ address: string; family: number }>;
  if (isIP(hostname)) candidates = [{ address: hostname, family: isIP(hostname) }];
  else {
    try {
      candidates = await lookup(hostname, { all: true, order: 'ipv4first' });
    } catch {
      throw new FetchError('unresolvable', url.href, `cannot resolve ${hostname}`);
    }
  }
  const allowed = candidates
    .filter((c) => isAllowedAddress(config, c.address))
    .map((c) => {
      const address = unmapped(c.address);
      return { address, family: (isIP(address) === 6 ? 6 : 4) as 4 | 6 };
    });
  if (allowed.length === 0)
    throw new FetchError('private-address', url.href, `${hostname} resolves to a non-public address`);
  return allowed;
}

/** The first address of the URL's host we may connect to. */
export async function resolveAllowedAddress(config: Config, url: URL): Promise<ResolvedAddress> {
  return (await resolveAllowedAddresses(config, url))[0];
}

export interface SafeFetchOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Sign the request (draft-cavage) with this key. */
  sign?: SigningKey | null;
  /** Response body cap (default 1 MiB). */
  maxBytes?: number;
  /** Deadline for the whole request including redirects (default 15 s). */
  timeoutMs?: number;
  /** Redirect hops followed for GET (default 3; POSTs never follow). */
  maxRedirects?: number;
}

export interface SafeResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: string;
}

export const DEFAULT_MAX_BYTES = 1024 * 1024;
const CONNECT_TIMEOUT_MS = 5_000;

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 }),
};

export const USER_AGENT = 'fedisrv/0.1 (ActivityPub; +https://github.com/fedisrv)';

function once(
  url: URL,
  address: ResolvedAddress,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  maxBytes: number,
  deadline: number,
): Promise<SafeResponse> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const remaining = Math.max(1, deadline - Date.now());
    const req = (secure ? https : http).request({
      method,
      host: address.address,
      family: address.family,
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      headers: { 'user-agent': USER_AGENT, ...headers, host: url.host },
      agent: secure ? agents.https : agents.http,
      ...(secure && !isIP(hostname) ? { servername: hostname } : {}),
    });
    let settled = false;
    const finish = (err: Error | null, res?: SafeResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(res as SafeResponse);
    };
    const timer = setTimeout(
      () => finish(new FetchError('timeout', url.href, `request timed out after ${remaining} ms`)),
      remaining,
    );
    req.on('socket', (socket) => {
      if (socket.connecting) {
        const connectTimer = setTimeout(
          () => finish(new FetchError('timeout', url.href, 'connection timed out')),
          CONNECT_TIMEOUT_MS,
        );
        socket.once('connect', () => clearTimeout(connectTimer));
        socket.once('close', () => clearTimeout(connectTimer));
      }
    });
    req.on('error', (err) =>
      finish(err instanceof FetchError ? err : new FetchError('network', url.href, err.message)),
    );
    req.on('response', (res) => {
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        res.destroy();
        finish(new FetchError('too-large', url.href, `response larger than ${maxBytes} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          res.destroy();
          finish(new FetchError('too-large', url.href, `response larger than ${maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (err) => finish(new FetchError('network', url.href, err.message)));
      res.on('end', () => {
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers))
          if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
        finish(null, { status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks), url: url.href });
      });
    });
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** A request to another server with every check of this module. */
export async function safeFetch(config: Config, rawUrl: string, opts: SafeFetchOptions = {}): Promise<SafeResponse> {
  const method = opts.method ?? 'GET';
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  const maxRedirects = method === 'GET' ? (opts.maxRedirects ?? 3) : 0;
  let url = checkRemoteUrl(config, rawUrl);
  for (let hop = 0; ; hop++) {
    const addresses = await resolveAllowedAddresses(config, url);
    const headers = opts.sign
      ? signRequest({ method, url, headers: opts.headers, body: opts.body ?? null, key: opts.sign })
      : { ...(opts.headers ?? {}) };
    let res: SafeResponse | null = null;
    for (let i = 0; res === null; i++) {
      try {
        res = await once(url, addresses[i], method, headers, opts.body, maxBytes, deadline);
      } catch (err) {
        // Connection refused on one address (e.g. ::1 for a server bound to 127.0.0.1): try the next.
        const refused = err instanceof FetchError && err.reason === 'connect';
        if (!refused || i + 1 >= addresses.length)
          throw refused ? new FetchError('network', url.href, err.message) : err;
      }
    }
    const location = res.headers.location;
    if (res.status >= 300 && res.status < 400 && location && maxRedirects > 0) {
      if (hop >= maxRedirects) throw new FetchError('too-many-redirects', url.href, 'too many redirects');
      let next: string;
      try {
        next = new URL(location, url).href;
      } catch {
        throw new FetchError('invalid-url', location, 'redirect to an invalid URL');
      }
      url = checkRemoteUrl(config, next);
      continue;
    }
    return res;
  }
}
