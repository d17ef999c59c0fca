// HTTP Signatures as the fediverse uses them (draft-cavage-12, federation reference §7): signing
// our outgoing requests the way Mastodon does, and verifying incoming ones with Mastodon's rules
// (rsa-sha256 / hs2019, strength checks, Digest over the raw body, a Date window, the request target
// with and without the query, one key refetch on failure). Written on node:crypto: it is a few
// string operations around one RSA call, and keeping it here keeps the hot inbox path allocation-light.
import { createHash, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import type { SigningKey } from './keys.ts';
import { publicKeyObject } from './keys.ts';

export type HeaderBag = Record<string, string | string[] | undefined>;

/** `SHA-256=<base64>` of a body, the Digest header value Mastodon sends and checks. */
export function digestHeader(body: string | Uint8Array): string {
  return `SHA-256=${createHash('sha256').update(body).digest('base64')}`;
}

export interface SignRequestInput {
  method: string;
  url: string | URL;
  /** Headers to send; Content-Type and Accept are signed when present. */
  headers?: Record<string, string>;
  body?: string | Uint8Array | null;
  key: SigningKey;
  now?: Date;
}

/**
 * The headers of a signed request: the given ones plus Host, Date, Digest (with a body) and
 * Signature over `(request-target) host date [digest] [content-type] [accept]`.
 */
export function signRequest(input: SignRequestInput): Record<string, string> {
  const url = typeof input.url === 'string' ? new URL(input.url) : input.url;
  const method = input.method.toUpperCase();
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? {})) out[name.toLowerCase()] = value;
  out.host = url.host;
  out.date = (input.now ?? new Date()).toUTCString();
  const signed = ['(request-target)', 'host', 'date'];
  if (input.body !== undefined && input.body !== null) {
    out.digest = digestHeader(input.body);
    signed.push('digest');
  }
  if (out['content-type'] !== undefined) signed.push('content-type');
  if (method === 'GET' && out.accept !== undefined) signed.push('accept');
  const target = `${method.toLowerCase()} ${url.pathname}${url.search}`;
  const text = signed.map((h) => (h === '(request-target)' ? `${h}: ${target}` : `${h}: ${out[h]}`)).join('\n');
  const signature = cryptoSign('sha256', Buffer.from(text), input.key.privateKey).toString('base64');
  out.signature =
    `keyId="${input.key.keyId}",algorithm="rsa-sha256",headers="${signed.join(' ')}",` + `signature="${signature}"`;
  return out;
}

export interface ParsedSignature {
  keyId: string;
  algorithm: string | null;
  headers: string[];
  signature: Buffer;
  created: number | null;
  expires: number | null;
}

/** Parses a draft-cavage Signature header (`k="v"` or `k=token`, comma separated); null when invalid. */
export function parseSignatureHeader(value: string): ParsedSignature | null {
  let rest = value.trim();
  if (/^signature\s+/i.test(rest)) rest = rest.replace(/^signature\s+/i, '');
  const params = new Map<string, string>();
  const re = /\s*([a-zA-Z]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s"]*))\s*(?:,|$)/y;
  let pos = 0;
  while (pos < rest.length) {
    re.lastIndex = pos;
    const m = re.exec(rest);
    if (!m || re.lastIndex === pos) return null;
    params.set(m[1].toLowerCase(), m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]);
    pos = re.lastIndex;
  }
  const keyId = params.get('keyid');
  const signature = params.get('signature');
  if (!keyId || !signature || !/^[A-Za-z0-9+/=_-]+$/.test(signature)) return null;
  const algorithm = params.get('algorithm')?.toLowerCase() ?? null;
  const headersParam = params.get('headers');
  const headers = headersParam
    ? headersParam.toLowerCase().split(/\s+/).filter(Boolean)
    : [algorithm === 'rsa-sha256' ? 'date' : '(created)'];
  const num = (name: string): number | null => {
    const v = params.get(name);
    return v !== undefined && /^\d{1,12}$/.test(v) ? Number(v) : null;
  };
  return {
    keyId,
    algorithm,
    headers,
    signature: Buffer.from(signature, 'base64'),
    created: num('created'),
    expires: num('expires'),
  };
}

export interface IncomingRequest {
  method: string;
  /** Path and query exactly as received. */
  url: string;
  headers: HeaderBag;
  /** Raw body bytes (POST). */
  body?: Uint8Array | null;
}

export interface ResolvedKey {
  /** PEM of the public key named by keyId. */
  publicKeyPem: string;
  /** The actor that owns the key. */
  owner: string;
  /** The key was fetched just now: a failed check is not worth a refetch. */
  fresh?: boolean;
}

/**
 * Finds the key for a keyId: from what we know (`refresh` false) or fetched anew (`refresh` true,
 * after a failed check: the actor may have rotated its key). null: no such key.
 */
export type KeyResolver = (keyId: string, opts: { refresh: boolean }) => Promise<ResolvedKey | null>;

export type VerifyResult =
  { ok: true; keyId: string; owner: string } | { ok: false; status: 401; error: string; keyId?: string };

export interface VerifyOptions {
  now?: Date;
  /** How old the signature date may be (default 12 h: the window, Mastodon's expiry cap). */
  maxAgeMs?: number;
  /** How far in the future it may be (default 1 h, as Mastodon). */
  maxFutureMs?: number;
}

const HOUR = 3_600_000;

function header(headers: HeaderBag, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function fail(error: string, keyId?: string): VerifyResult {
  return { ok: false, status: 401, error, keyId };
}

/** Checks `Digest` (one or more `algo=value` pairs) against the raw body; SHA-256 must be among them. */
export function digestMatches(value: string, body: Uint8Array): boolean {
  let sha256: string | null = null;
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim().toLowerCase() === 'sha-256') sha256 = part.slice(eq + 1).trim();
  }
  if (sha256 === null) return false;
  return createHash('sha256').update(body).digest('base64') === sha256;
}

function signingString(sig: ParsedSignature, req: IncomingRequest, target: string): string | null {
  const lines: string[] = [];
  for (const name of sig.headers) {
    if (name === '(request-target)') lines.push(`(request-target): ${req.method.toLowerCase()} ${target}`);
    else if (name === '(created)') {
      if (sig.created === null) return null;
      lines.push(`(created): ${sig.created}`);
    } else if (name === '(expires)') {
      if (sig.expires === null) return null;
      lines.push(`(expires): ${sig.expires}`);
    } else {
      const v = header(req.headers, name);
      if (v === undefined) return null;
      lines.push(`${name}: ${v}`);
    }
  }
  return lines.join('\n');
}

function verifyWith(key: KeyObject, data: Buffer, signature: Buffer): boolean {
  try {
    const algorithm = key.asymmetricKeyType === 'ed25519' ? null : 'sha256';
    return cryptoVerify(algorithm, data, key, signature);
  } catch {
    return false;
  }
}

function checkSignedData(sig: ParsedSignature, req: IncomingRequest, pem: string): boolean {
  let key: KeyObject;
  try {
    key = publicKeyObject(pem);
  } catch {
    return false;
  }
  // Mastodon: with the full target first, then without the query (older senders signed the path).
  const targets = [req.url];
  const q = req.url.indexOf('?');
  if (q >= 0) targets.push(req.url.slice(0, q));
  for (const target of targets) {
    const text = signingString(sig, req, target);
    if (text !== null && verifyWith(key, Buffer.from(text), sig.signature)) return true;
  }
  return false;
}

/**
 * Verifies the draft-cavage signature of an incoming request. Failures are 401 with a reason that
 * can be shown to the sender (Mastodon's `{"error": ...}`).
 */
export async function verifyRequest(
  req: IncomingRequest,
  resolveKey: KeyResolver,
  opts: VerifyOptions = {},
): Promise<VerifyResult> {
  const raw = header(req.headers, 'signature');
  if (!raw) {
    if (header(req.headers, 'signature-input'))
      return fail('RFC 9421 signatures are not supported; sign with draft-cavage HTTP Signatures');
    return fail('Request not signed');
  }
  const sig = parseSignatureHeader(raw);
  if (!sig) return fail('Error parsing signature parameters');
  if (sig.algorithm !== null && sig.algorithm !== 'rsa-sha256' && sig.algorithm !== 'hs2019')
    return fail(`Unsupported signature algorithm ${sig.algorithm}`, sig.keyId);
  const covered = new Set(sig.headers);
  const method = req.method.toUpperCase();
  if (!covered.has('date') && !covered.has('(created)'))
    return fail('Mastodon requires the Date header or (created) pseudo-header to be signed', sig.keyId);
  if (!covered.has('(request-target)') && !covered.has('digest'))
    return fail('Mastodon requires the Digest header or (request-target) pseudo-header to be signed', sig.keyId);
  if (method === 'GET' && !covered.has('host'))
    return fail('Mastodon requires the Host header to be signed when doing a GET request', sig.keyId);
  if (method === 'POST' && !covered.has('digest'))
    return fail('Mastodon requires the Digest header to be signed when doing a POST request', sig.keyId);
  if ((covered.has('(created)') || covered.has('(expires)')) && sig.algorithm === 'rsa-sha256')
    return fail('Invalid pseudo-header (created) or (expires) for rsa-sha256', sig.keyId);

  // Time window.
  const now = (opts.now ?? new Date()).getTime();
  let created: number;
  if (covered.has('(created)')) {
    if (sig.created === null) return fail('Invalid Date header', sig.keyId);
    created = sig.created * 1000;
  } else {
    const date = header(req.headers, 'date');
    const parsed = date ? Date.parse(date) : NaN;
    if (!Number.isFinite(parsed)) return fail('Invalid Date header', sig.keyId);
    created = parsed;
  }
  if (created > now + (opts.maxFutureMs ?? HOUR)) return fail('Signed request date is in the future', sig.keyId);
  if (now - created > (opts.maxAgeMs ?? 12 * HOUR))
    return fail('Signed request date outside acceptable time window', sig.keyId);
  if (covered.has('(expires)') && sig.expires !== null && now > sig.expires * 1000 + HOUR)
    return fail('Signed request has expired', sig.keyId);

  if (covered.has('digest')) {
    const digest = header(req.headers, 'digest');
    if (!digest) return fail('Digest header missing', sig.keyId);
    if (!digestMatches(digest, req.body ?? new Uint8Array())) return fail('Invalid Digest value', sig.keyId);
  }

  let key: ResolvedKey | null;
  try {
    key = await resolveKey(sig.keyId, { refresh: false });
  } catch {
    key = null;
  }
  if (key && checkSignedData(sig, req, key.publicKeyPem)) return { ok: true, keyId: sig.keyId, owner: key.owner };
  if (key?.fresh) return fail('Verification failed', sig.keyId);
  let fresh: ResolvedKey | null;
  try {
    fresh = await resolveKey(sig.keyId, { refresh: true });
  } catch {
    fresh = null;
  }
  if (!fresh) return fail(`Public key not found for key ${sig.keyId}`, sig.keyId);
  if (checkSignedData(sig, req, fresh.publicKeyPem)) return { ok: true, keyId: sig.keyId, owner: fresh.owner };
  return fail('Verification failed', sig.keyId);
}
