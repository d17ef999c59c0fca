// A hand-written ActivityPub peer for negative tests: it serves WebFinger, actors and any document
// the test puts up, records what reaches its inbox, and signs what it sends, with options to
// break the signature on purpose (forged key, stale Date, wrong Digest, no signature).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { signRequest } from '../../services/core/activitypub/httpSignatures.ts';

export interface PeerActor {
  username: string;
  uri: string;
  keyId: string;
  privateKey: KeyObject;
  publicKeyPem: string;
  document: Record<string, unknown>;
}

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface MiniPeer {
  url: string;
  domain: string;
  inbox: Received[];
  /** Extra documents by path (served as activity+json unless `contentType` says otherwise). */
  documents: Map<string, { body: unknown; contentType?: string; status?: number }>;
  addActor(username: string, extra?: Record<string, unknown>): PeerActor;
  send(
    actor: PeerActor,
    inboxUrl: string,
    activity: Record<string, unknown>,
    opts?: SendOptions,
  ): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

export interface SendOptions {
  /** Sign with this key instead (a forged signature). */
  key?: KeyObject;
  date?: Date;
  /** Replace the Digest header after signing. */
  digest?: string;
  unsigned?: boolean;
  rawBody?: string;
}

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKeyPem: publicKey, privateKey: createPrivateKey(privateKey) };
}

export async function startMiniPeer(): Promise<MiniPeer> {
  const actors = new Map<string, PeerActor>();
  const inbox: Received[] = [];
  const documents = new Map<string, { body: unknown; contentType?: string; status?: number }>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const json = (status: number, body: unknown, type = 'application/activity+json') => {
        res.writeHead(status, { 'content-type': type });
        // A page (text/html) is served as it is written.
        res.end(typeof body === 'string' && type.startsWith('text/') ? body : JSON.stringify(body));
      };
      if (req.method === 'POST') {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          /* recorded as empty */
        }
        inbox.push({ path, headers: req.headers, body });
        res.writeHead(202);
        res.end();
        return;
      }
      if (path.startsWith('/.well-known/webfinger')) {
        const resource = new URL(path, url).searchParams.get('resource') ?? '';
        const m = /^acct:([^@]+)@(.+)$/.exec(resource);
        const actor = m && m[2] === domain ? actors.get(m[1]) : undefined;
        if (!actor) return json(404, {}, 'application/jrd+json');
        return json(
          200,
          {
            subject: `acct:${actor.username}@${domain}`,
            links: [{ rel: 'self', type: 'application/activity+json', href: actor.uri }],
          },
          'application/jrd+json',
        );
      }
      const doc = documents.get(path);
      if (doc) return json(doc.status ?? 200, doc.body, doc.contentType);
      const actor = [...actors.values()].find((a) => new URL(a.uri).pathname === path);
      if (actor) return json(200, actor.document);
      json(404, { error: 'not found' });
    });
  });
  // Port 0: the kernel's choice; the handler reads `domain` and `url` only once requests come.
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const domain = `localhost:${(server.address() as AddressInfo).port}`;
  const url = `http://${domain}`;

  return {
    url,
    domain,
    inbox,
    documents,
    addActor(username, extra = {}) {
      const keys = keyPair();
      const uri = `${url}/users/${username}`;
      const document = {
        '@context': ['https://www.w3.org/ns/activitystreams', 'https://w3id.org/security/v1'],
        id: uri,
        type: 'Person',
        preferredUsername: username,
        name: `${username} of the peer`,
        inbox: `${uri}/inbox`,
        outbox: `${uri}/outbox`,
        followers: `${uri}/followers`,
        following: `${uri}/following`,
        endpoints: { sharedInbox: `${url}/inbox` },
        url: `${url}/@${username}`,
        publicKey: { id: `${uri}#main-key`, owner: uri, publicKeyPem: keys.publicKeyPem },
        ...extra,
      };
      const actor = { username, uri, keyId: `${uri}#main-key`, ...keys, document };
      actors.set(username, actor);
      return actor;
    },
    async send(actor, inboxUrl, activity, opts = {}) {
      const body = opts.rawBody ?? JSON.stringify(activity);
      let headers: Record<string, string> = { 'content-type': 'application/activity+json' };
      if (!opts.unsigned)
        headers = signRequest({
          method: 'POST',
          url: inboxUrl,
          headers,
          body,
          key: { keyId: actor.keyId, privateKey: opts.key ?? actor.privateKey },
          now: opts.date,
        });
      if (opts.digest) headers.digest = opts.digest;
      // fetch sets Host itself, from the URL: the same value we signed.
      delete headers.host;
      const res = await fetch(inboxUrl, { method: 'POST', headers, body });
      return { status: res.status, body: await res.text() };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
