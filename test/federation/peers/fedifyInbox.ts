// An inbox built on Fedify, run as its own process (Fedify is ESM-only in practice; the tests run
// on Jest's CommonJS): every POST's draft-cavage signature is verified by Fedify's verifier, which
// fetches the signer's key from its server with Fedify's document loader, and the activity is read
// with Fedify's JSON-LD vocabulary (embedded objects too). Prints `listening PORT`, then one JSON
// line per request: path, key owner, the activity's type, actor, id and its object's type and id.
// Answers 202 when the signature verifies, else 401.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyRequest } from '@fedify/fedify/sig';
import { Activity, Object as ApObject } from '@fedify/fedify/vocab';
import { getDocumentLoader } from '@fedify/vocab-runtime';

const documentLoader = getDocumentLoader({ allowPrivateAddress: true });
const opts = { documentLoader, contextLoader: documentLoader };

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    // This peer publishes nothing: only its inbox answers.
    res.writeHead(404).end();
    req.resume();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      const body = Buffer.concat(chunks);
      const out: Record<string, unknown> = { path: req.url, keyOwner: null, error: null };
      try {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
        const base = `http://${req.headers.host ?? 'localhost'}`;
        const request = new Request(new URL(req.url ?? '/', base), { method: req.method, headers, body });
        const key = await verifyRequest(request, opts);
        out.keyOwner = key?.ownerId?.href ?? null;
        const activity = await Activity.fromJsonLd(JSON.parse(body.toString('utf8')), opts);
        out.type = activity.constructor.name;
        out.id = activity.id?.href ?? null;
        out.actor = activity.actorId?.href ?? null;
        const object = await activity.getObject(opts).catch(() => null);
        out.objectType = object instanceof ApObject ? object.constructor.name : null;
        out.objectId = activity.objectId?.href ?? object?.id?.href ?? null;
        if (object && 'content' in object && object.content) out.content = String(object.content);
      } catch (err) {
        out.error = (err as Error).message;
      }
      process.stdout.write(`${JSON.stringify(out)}\n`);
      res.writeHead(out.keyOwner ? 202 : 401).end();
    })();
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
