// A real HTTP server standing in for remote inboxes: it checks every POST's draft-cavage signature
// and Digest (with the project's verifier and the signer's public key as given by `keys`), keeps
// what it received, and answers with whatever `respond` says (202 by default), so tests can play
// a healthy, failing or dead server. Any path is an inbox; the Host header names the "server".
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyRequest, type ResolvedKey } from '../../services/core/activitypub/httpSignatures.ts';

export interface ReceivedActivity {
  host: string;
  path: string;
  contentType: string | undefined;
  /** Names of the signed headers, in order. */
  signedHeaders: string[];
  verified: boolean;
  /** Who signed (the key's owner) when verified. */
  signer: string | null;
  error: string | null;
  /** The status the sink answered with. */
  status: number;
  body: Record<string, unknown>;
  at: number;
}

export interface InboxSink {
  url: string;
  port: number;
  received: ReceivedActivity[];
  /** Decides the answer per request (status and optional headers); 'hang' never answers. */
  respond: (req: {
    host: string;
    path: string;
    body: Record<string, unknown>;
  }) => number | 'hang' | { status: number; headers?: Record<string, string> };
  close(): Promise<void>;
}

export async function startInboxSink(
  keys: (keyId: string) => Promise<ResolvedKey | null>,
  opts: { verify?: boolean } = {},
): Promise<InboxSink> {
  const hanging = new Set<ServerResponse>();
  const sink: InboxSink = {
    url: '',
    port: 0,
    received: [],
    respond: () => 202,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const host = String(req.headers.host ?? '');
    const path = req.url ?? '/';
    const answer = sink.respond({ host, path, body });
    if (answer === 'hang') {
      hanging.add(res);
      return;
    }
    const sig = String(req.headers.signature ?? '');
    const signedHeaders = /headers="([^"]*)"/.exec(sig)?.[1]?.split(' ') ?? [];
    const result =
      opts.verify === false
        ? ({ ok: true, owner: null } as const)
        : await verifyRequest({ method: req.method ?? 'POST', url: path, headers: req.headers, body: raw }, (keyId) =>
            keys(keyId),
          );
    const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
    sink.received.push({
      host,
      path,
      contentType: req.headers['content-type'],
      signedHeaders,
      verified: result.ok,
      signer: result.ok ? result.owner : null,
      error: result.ok ? null : result.error,
      status: result.ok ? status : 401,
      body,
      at: Date.now(),
    });
    res.writeHead(result.ok ? status : 401, headers).end();
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sink.port = (server.address() as AddressInfo).port;
  sink.url = `http://127.0.0.1:${sink.port}`;
  return sink;
}
