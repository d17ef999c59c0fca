// A real Web Push service for tests: an HTTP server on loopback that hands out subscriptions (its
// own P-256 key pair and auth secret per subscription, as a browser makes them), answers pushes
// with the statuses a test queues (201 otherwise), checks the VAPID Authorization header (ES256 JWT
// signed by the key in `k`, audience = the endpoint's origin) and decrypts the RFC 8291 aes128gcm
// body with the subscription's private key, independently of the `web-push` package.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';

export interface ReceivedPush {
  path: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The VAPID public key from the Authorization header (base64url). */
  vapidKey: string | null;
  /** The decrypted JSON, or null when the body could not be decrypted. */
  payload: Record<string, unknown> | null;
  error?: string;
}

export interface TestPushSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  path: string;
}

interface Keys {
  ecdh: ECDH;
  auth: Buffer;
}

function concat(...parts: (Buffer | string)[]): Buffer {
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
}

/** RFC 8291 + RFC 8188 decryption of a single-record aes128gcm body. */
export function decryptAes128gcm(body: Buffer, keys: Keys): Buffer {
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20] ?? 0;
  const senderPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  if (record.length > rs) throw new Error('more than one record');
  const receiverPublic = keys.ecdh.getPublicKey();
  const ecdhSecret = keys.ecdh.computeSecret(senderPublic);
  const ikm = Buffer.from(
    hkdfSync('sha256', ecdhSecret, keys.auth, concat('WebPush: info\0', receiverPublic, senderPublic), 32),
  );
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, 'Content-Encoding: aes128gcm\0', 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, 'Content-Encoding: nonce\0', 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error('last record delimiter missing');
  return padded.subarray(0, end);
}

/** Checks `vapid t=<jwt>, k=<key>`: returns the key when the JWT is signed by it for `audience`. */
function verifyVapid(header: string | undefined, audience: string): string {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!m?.[1] || !m[2]) throw new Error(`no VAPID authorization: ${header}`);
  const [h, p, s] = m[1].split('.');
  if (!h || !p || !s) throw new Error('malformed JWT');
  const raw = Buffer.from(m[2], 'base64url');
  const jwk = {
    kty: 'EC',
    crv: 'P-256',
    x: raw.subarray(1, 33).toString('base64url'),
    y: raw.subarray(33, 65).toString('base64url'),
  };
  const ok = verify(
    'sha256',
    Buffer.from(`${h}.${p}`),
    { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    Buffer.from(s, 'base64url'),
  );
  if (!ok) throw new Error('VAPID signature invalid');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { aud?: string; exp?: number; sub?: string };
  if (claims.aud !== audience) throw new Error(`VAPID audience ${claims.aud} is not ${audience}`);
  if (!claims.exp || claims.exp * 1000 < Date.now()) throw new Error('VAPID token expired');
  return m[2];
}

export class PushReceiver {
  readonly messages: ReceivedPush[] = [];
  private readonly keys = new Map<string, Keys>();
  private readonly queued = new Map<string, number[]>();
  private readonly server: http.Server;
  private base = '';

  private constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const status = this.queued.get(path)?.shift() ?? 201;
        const msg: ReceivedPush = { path, status, headers: req.headers, vapidKey: null, payload: null };
        try {
          msg.vapidKey = verifyVapid(req.headers.authorization, this.base);
          if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error('not aes128gcm');
          const keys = this.keys.get(path);
          if (!keys) throw new Error('unknown subscription');
          msg.payload = JSON.parse(decryptAes128gcm(Buffer.concat(chunks), keys).toString('utf8')) as Record<
            string,
            unknown
          >;
        } catch (err) {
          msg.error = (err as Error).message;
        }
        this.messages.push(msg);
        res.writeHead(status).end();
      });
    });
  }

  static async start(): Promise<PushReceiver> {
    const r = new PushReceiver();
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.base = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}`;
    return r;
  }

  /** A new browser-like subscription (fresh keys) on its own path. */
  subscription(): TestPushSubscription {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const auth = randomBytes(16);
    const path = `/push/${randomBytes(8).toString('hex')}`;
    this.keys.set(path, { ecdh, auth });
    return {
      path,
      endpoint: `${this.base}${path}`,
      keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
    };
  }

  /** The next pushes to `path` are answered with these statuses, in order. */
  respondWith(path: string, ...statuses: number[]): void {
    this.queued.set(path, [...(this.queued.get(path) ?? []), ...statuses]);
  }

  received(path: string): ReceivedPush[] {
    return this.messages.filter((m) => m.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
