import { generateKeyPairSync, createPrivateKey, sign as cryptoSign } from 'node:crypto';
import {
  digestHeader,
  parseSignatureHeader,
  signRequest,
  verifyRequest,
  type KeyResolver,
} from '../../../services/core/activitypub/httpSignatures.ts';

function pair() {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKeyPem: publicKey, privateKeyPem: privateKey };
}

const alice = pair();
const mallory = pair();
const KEY_ID = 'https://remote.example/users/alice#main-key';
const OWNER = 'https://remote.example/users/alice';
const key = { keyId: KEY_ID, privateKey: createPrivateKey(alice.privateKeyPem) };

const resolver =
  (pem = alice.publicKeyPem): KeyResolver =>
  async (keyId) =>
    keyId === KEY_ID ? { publicKeyPem: pem, owner: OWNER } : null;

const body = JSON.stringify({ type: 'Create', actor: OWNER });

function signedPost(opts: { now?: Date; body?: string; url?: string } = {}) {
  const url = opts.url ?? 'https://our.example/users/bob/inbox';
  const headers = signRequest({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/activity+json' },
    body: opts.body ?? body,
    key,
    now: opts.now,
  });
  const u = new URL(url);
  return { method: 'POST', url: `${u.pathname}${u.search}`, headers, body: Buffer.from(opts.body ?? body) };
}

describe('HTTP signatures (draft-cavage)', () => {
  it('signs a POST as Mastodon does and verifies it', async () => {
    const req = signedPost();
    const parsed = parseSignatureHeader(req.headers.signature);
    expect(parsed?.headers).toEqual(['(request-target)', 'host', 'date', 'digest', 'content-type']);
    expect(parsed?.algorithm).toBe('rsa-sha256');
    expect(req.headers.digest).toBe(digestHeader(body));
    expect(req.headers.host).toBe('our.example');
    await expect(verifyRequest(req, resolver())).resolves.toEqual({ ok: true, keyId: KEY_ID, owner: OWNER });
  });

  it('signs a GET over (request-target) host date accept', async () => {
    const headers = signRequest({
      method: 'GET',
      url: 'https://our.example/users/bob?page=1',
      headers: { accept: 'application/activity+json' },
      key,
    });
    expect(parseSignatureHeader(headers.signature)?.headers).toEqual(['(request-target)', 'host', 'date', 'accept']);
    const res = await verifyRequest({ method: 'GET', url: '/users/bob?page=1', headers }, resolver());
    expect(res.ok).toBe(true);
  });

  it('refuses a signature made with another key (forged)', async () => {
    const req = signedPost();
    const res = await verifyRequest(req, resolver(mallory.publicKeyPem));
    expect(res).toMatchObject({ ok: false, status: 401 });
  });

  it('refuses a tampered body (Digest mismatch) and a missing Digest', async () => {
    const req = signedPost();
    const tampered = { ...req, body: Buffer.from(body.replace('Create', 'Delete')) };
    expect(await verifyRequest(tampered, resolver())).toMatchObject({ ok: false, error: 'Invalid Digest value' });
    const { digest: _d, ...noDigest } = req.headers;
    void _d;
    expect(await verifyRequest({ ...req, headers: noDigest }, resolver())).toMatchObject({ ok: false, status: 401 });
  });

  it('refuses a Digest header that does not match the signed one', async () => {
    const req = signedPost();
    const res = await verifyRequest({ ...req, headers: { ...req.headers, digest: digestHeader('{}') } }, resolver());
    expect(res.ok).toBe(false);
  });

  it('refuses stale and future dates, accepts within the window', async () => {
    const stale = signedPost({ now: new Date(Date.now() - 13 * 3600_000) });
    expect(await verifyRequest(stale, resolver())).toMatchObject({ ok: false, status: 401 });
    const future = signedPost({ now: new Date(Date.now() + 2 * 3600_000) });
    expect(await verifyRequest(future, resolver())).toMatchObject({ ok: false, status: 401 });
    const recent = signedPost({ now: new Date(Date.now() - 30 * 60_000) });
    expect((await verifyRequest(recent, resolver())).ok).toBe(true);
  });

  it('refuses unsigned requests, unparsable headers and unsupported algorithms', async () => {
    const req = signedPost();
    const { signature: _s, ...unsigned } = req.headers;
    void _s;
    expect(await verifyRequest({ ...req, headers: unsigned }, resolver())).toMatchObject({ ok: false });
    expect(
      await verifyRequest({ ...req, headers: { ...req.headers, signature: 'garbage' } }, resolver()),
    ).toMatchObject({ ok: false });
    const hmac = req.headers.signature.replace('rsa-sha256', 'hmac-sha256');
    expect(await verifyRequest({ ...req, headers: { ...req.headers, signature: hmac } }, resolver())).toMatchObject({
      ok: false,
    });
  });

  it('refuses a POST whose signature does not cover the digest', async () => {
    const date = new Date().toUTCString();
    const text = `(request-target): post /inbox\nhost: our.example\ndate: ${date}`;
    const signature = cryptoSign('sha256', Buffer.from(text), key.privateKey).toString('base64');
    const headers = {
      host: 'our.example',
      date,
      digest: digestHeader(body),
      signature: `keyId="${KEY_ID}",algorithm="rsa-sha256",headers="(request-target) host date",signature="${signature}"`,
    };
    const res = await verifyRequest({ method: 'POST', url: '/inbox', headers, body: Buffer.from(body) }, resolver());
    expect(res).toMatchObject({ ok: false, status: 401 });
  });

  it('accepts hs2019, any header order (Misskey, Mastodon 4.4) and a path signed without its query', async () => {
    const date = new Date().toUTCString();
    const digest = digestHeader(body);
    const text = `date: ${date}\nhost: our.example\ndigest: ${digest}\n(request-target): post /inbox`;
    const signature = cryptoSign('sha256', Buffer.from(text), key.privateKey).toString('base64');
    const headers = {
      host: 'our.example',
      date,
      digest,
      signature: `keyId="${KEY_ID}", algorithm="hs2019", headers="date host digest (request-target)", signature="${signature}"`,
    };
    const res = await verifyRequest(
      { method: 'POST', url: '/inbox?x=1', headers, body: Buffer.from(body) },
      resolver(),
    );
    expect(res.ok).toBe(true);
  });

  it('refetches the key once when verification fails (key rotation)', async () => {
    const req = signedPost();
    const calls: boolean[] = [];
    const rotating: KeyResolver = async (_id, { refresh }) => {
      calls.push(refresh);
      return { publicKeyPem: refresh ? alice.publicKeyPem : mallory.publicKeyPem, owner: OWNER };
    };
    expect((await verifyRequest(req, rotating)).ok).toBe(true);
    expect(calls).toEqual([false, true]);
  });

  it('answers 401 for an RFC 9421 signature, so double-knocking senders retry with draft-cavage', async () => {
    const res = await verifyRequest(
      {
        method: 'POST',
        url: '/inbox',
        headers: { 'signature-input': 'sig1=("@method");keyid="x"', 'content-digest': 'sha-256=:abc=:' },
        body: Buffer.from(body),
      },
      resolver(),
    );
    expect(res).toMatchObject({ ok: false, status: 401 });
  });
});
