// The S3 driver over real HTTP against a minimal S3-compatible stub (no live S3 here): signed
// path-style requests, content type, ACL and cache headers on PUT; GET of a stored object and of a
// missing one; DELETE. Shows the driver speaks the protocol, not that a given vendor accepts it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Storage, s3SettingsFromEnv } from '../../../services/core/media/storage.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

describe('S3 storage driver', () => {
  let server: http.Server;
  let endpoint: string;
  const objects = new Map<string, { body: Buffer; type: string }>();
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
        const path = (req.url ?? '').split('?')[0];
        if (req.method === 'PUT') {
          objects.set(path, { body: Buffer.concat(chunks), type: String(req.headers['content-type']) });
          res.writeHead(200, { etag: '"abc"' }).end();
        } else if (req.method === 'GET') {
          const obj = objects.get(path);
          if (!obj) {
            res
              .writeHead(404, { 'content-type': 'application/xml' })
              .end('<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>missing</Message></Error>');
          } else {
            res.writeHead(200, { 'content-type': obj.type, 'content-length': String(obj.body.length) }).end(obj.body);
          }
        } else if (req.method === 'DELETE') {
          objects.delete(path);
          res.writeHead(204).end();
        } else {
          res.writeHead(405).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('puts, gets, misses and deletes objects with signed path-style requests', async () => {
    const settings = s3SettingsFromEnv({
      S3_ENABLED: 'true',
      S3_BUCKET: 'media',
      S3_ENDPOINT: endpoint,
      S3_REGION: 'eu-central-1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      S3_ALIAS_HOST: 'files.social.example',
    });
    const storage = new S3Storage(settings!);
    const key = 'media_attachments/files/5/original/0123abcd.png';
    const data = Buffer.from('not really a png, but bytes');
    await storage.put(key, data, 'image/png');

    const put = seen.find((r) => r.method === 'PUT')!;
    expect(put.url.split('?')[0]).toBe(`/media/${key}`);
    expect(put.headers['content-type']).toBe('image/png');
    expect(put.headers['x-amz-acl']).toBe('public-read');
    expect(put.headers['cache-control']).toMatch(/max-age/);
    expect(String(put.headers.authorization)).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-central-1\/s3\/aws4_request/,
    );

    expect((await storage.get(key))?.equals(data)).toBe(true);
    expect(await storage.get('media_attachments/files/5/original/missing.png')).toBeNull();
    expect(storage.url(key)).toBe(`https://files.social.example/${key}`);

    await storage.delete(key);
    expect(seen.at(-1)).toMatchObject({ method: 'DELETE' });
    expect(await storage.get(key)).toBeNull();
    await expect(storage.put('../escape', data, 'image/png')).rejects.toThrow(/unsafe storage key/);
  });
});
