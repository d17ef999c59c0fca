// Remote fetches with the origin and SSRF rules, against real local servers: a document claiming
// another id, a redirect into a private address, private and special addresses in every spelling
// when not allowed, size limits, and the ActivityPub media type requirement.
import { testConfig } from '../support/config.ts';
import { closeTestCore, createTestCore, type TestCore } from '../support/core.ts';
import { fetchDocument, DocumentError } from '../../services/core/activitypub/fetchDocument.ts';
import { FetchError, safeFetch } from '../../services/core/activitypub/safeFetch.ts';
import { LOOPBACK_FEDERATION } from './support.ts';
import { startMiniPeer, type MiniPeer } from './miniPeer.ts';

describe('remote fetches', () => {
  let allowed: TestCore;
  let strict: TestCore;
  let peer: MiniPeer;

  beforeAll(async () => {
    allowed = await createTestCore(testConfig(LOOPBACK_FEDERATION));
    strict = await createTestCore(testConfig({ FEDERATION_ALLOW_HTTP: 'true' }));
    peer = await startMiniPeer();
  });
  afterAll(async () => {
    await peer.close();
    await closeTestCore(allowed.core);
    await closeTestCore(strict.core);
  });

  const ctx = { '@context': 'https://www.w3.org/ns/activitystreams' };

  it('accepts a document whose id is the URL it was fetched from', async () => {
    peer.documents.set('/notes/1', { body: { ...ctx, id: `${peer.url}/notes/1`, type: 'Note' } });
    await expect(fetchDocument(allowed.core, `${peer.url}/notes/1`)).resolves.toMatchObject({ type: 'Note' });
  });

  it('refuses a document claiming another id (CVE-2024-23832 class), unless that id confirms itself', async () => {
    peer.documents.set('/evil', { body: { ...ctx, id: 'https://victim.example/users/alice', type: 'Person' } });
    await expect(fetchDocument(allowed.core, `${peer.url}/evil`)).rejects.toMatchObject({ problem: 'id-mismatch' });
    // With the id unknown in advance, the claimed id is fetched: an unreachable victim host fails too.
    await expect(fetchDocument(allowed.core, `${peer.url}/evil`, { idUnknown: true })).rejects.toBeDefined();
    peer.documents.set('/alias', { body: { ...ctx, id: `${peer.url}/notes/1`, type: 'Note' } });
    await expect(fetchDocument(allowed.core, `${peer.url}/alias`, { idUnknown: true })).resolves.toMatchObject({
      id: `${peer.url}/notes/1`,
    });
  });

  it('refuses documents that are not ActivityPub: wrong media type, no AS context, too deep', async () => {
    peer.documents.set('/plain', { body: { ...ctx, id: `${peer.url}/plain` }, contentType: 'application/json' });
    await expect(fetchDocument(allowed.core, `${peer.url}/plain`)).rejects.toMatchObject({ problem: 'media-type' });
    peer.documents.set('/noctx', { body: { id: `${peer.url}/noctx` } });
    await expect(fetchDocument(allowed.core, `${peer.url}/noctx`)).rejects.toMatchObject({ problem: 'context' });
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    peer.documents.set('/deep', { body: { ...ctx, id: `${peer.url}/deep`, x: deep } });
    await expect(fetchDocument(allowed.core, `${peer.url}/deep`)).rejects.toBeInstanceOf(DocumentError);
  });

  it('refuses responses over the size limit', async () => {
    peer.documents.set('/big', { body: { ...ctx, id: `${peer.url}/big`, pad: 'x'.repeat(2 * 1024 * 1024) } });
    await expect(fetchDocument(allowed.core, `${peer.url}/big`)).rejects.toMatchObject({ reason: 'too-large' });
  });

  it('refuses private, loopback and link-local addresses when not allowed, in every spelling', async () => {
    const port = new URL(peer.url).port;
    for (const url of [
      `${peer.url}/notes/1`,
      `http://127.0.0.1:${port}/notes/1`,
      `http://2130706433:${port}/notes/1`,
      `http://0177.0.0.1:${port}/notes/1`,
      `http://0x7f.0.0.1:${port}/notes/1`,
      `http://[::1]:${port}/notes/1`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      await expect(safeFetch(strict.core.config, url)).rejects.toMatchObject({ reason: 'private-address' });
    }
  });

  it('checks every redirect hop again', async () => {
    // A server on an allowed address redirecting to the cloud metadata address.
    const http = await import('node:http');
    const server = http.createServer((_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    try {
      await expect(safeFetch(allowed.core.config, `http://127.0.0.1:${port}/`)).rejects.toBeInstanceOf(FetchError);
      await expect(safeFetch(allowed.core.config, `http://127.0.0.1:${port}/`)).rejects.toMatchObject({
        reason: 'private-address',
      });
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
