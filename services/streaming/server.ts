// The `streaming` role's server: uWebSockets.js (see README, "uWebSockets.js", for where the binary
// comes from). It serves Mastodon's WebSocket streaming API on /api/v1/streaming (token from the
// `access_token` query, the Authorization header or Sec-WebSocket-Protocol; streams from the
// `stream` query and subscribe/unsubscribe messages), the health check and /metrics. Messages come
// from Redis pub/sub (services/core/streaming/channels.ts), subscribed per channel while needed.
import {
  App,
  type WebSocket,
  us_listen_socket_close,
  us_socket_local_port,
  type HttpResponse,
  type TemplatedApp,
  type us_listen_socket,
} from 'uWebSockets.js';
import type { Logger } from '../core/logger.ts';
import { registry } from '../core/metrics.ts';
import type { Core } from '../core/context.ts';
import { collection } from '../core/db/mongo.ts';
import { liveness } from '../core/db/mongoContact.ts';
import { accessTokens } from '../core/model/oauth.ts';
import { barredAccounts } from '../core/moderation/barred.ts';
import { resolveToken } from '../core/auth/resolveToken.ts';
import { Connection, type Viewer } from './connections.ts';
import { resolveStream, scopesFor, StreamError } from './streams.ts';
import { scopesAllow } from '../core/auth/scopes.ts';
import { Subscriptions } from './subscriptions.ts';
import { recordActivity } from '../core/feeds/activity.ts';
import { EMPTY_FILTER, loadViewerFilters } from './viewerFilters.ts';

/** Server-sent events: a comment this often keeps idle proxies from cutting the connection. */
const SSE_HEARTBEAT_MS = 15_000;

/** SSE paths (after /api/v1/streaming/) and their stream names; `only_media` adds ":media". */
const SSE_STREAMS: Record<string, string> = {
  user: 'user',
  'user/notification': 'user:notification',
  public: 'public',
  'public/local': 'public:local',
  'public/remote': 'public:remote',
  hashtag: 'hashtag',
  'hashtag/local': 'hashtag:local',
  list: 'list',
  direct: 'direct',
};

/** How often open sockets are checked for revoked tokens and their block/mute filters refreshed. */
const SWEEP_MS = 3_000;

interface SocketData {
  connection: Connection | null;
  viewer: Viewer | null;
  initial: { stream: string; tag?: string; list?: string } | null;
}

export interface StreamingServer {
  /** The port it listens on (useful when started on port 0). */
  port: number;
  /** Stops accepting, lets in-flight requests finish (bounded by `graceMs`), then closes every connection. */
  stop(graceMs?: number): Promise<void>;
}

export interface StreamingOptions {
  host: string;
  port: number;
  logger: Logger;
  core: Core;
}

function refuse(res: HttpResponse, aborted: boolean): void {
  if (aborted) return;
  res.cork(() => {
    res
      .writeStatus('401 Unauthorized')
      .writeHeader('Content-Type', 'application/json')
      .end(JSON.stringify({ error: 'Invalid access token' }));
  });
}

function text(res: HttpResponse, status: string, body: string): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('Content-Type', 'text/plain; charset=utf-8').end(body);
  });
}

export function startStreamingServer(opts: StreamingOptions): Promise<StreamingServer> {
  const logger = opts.logger.child({ role: 'streaming' });
  // Handlers that answer asynchronously count themselves here so stop() can wait for them.
  const inFlight = { count: 0 };
  const { core } = opts;
  const subscriptions = new Subscriptions(core.config, logger, core.redis);
  const sockets = new Set<WebSocket<SocketData>>();
  /** How to end each open server-sent-events response (at shutdown). */
  const sse = new Set<() => void>();
  /** Server-sent-events connections of logged-in viewers (their filters are refreshed by the sweep). */
  const sseConnections = new Set<Connection>();
  const app: TemplatedApp = App()
    .ws<SocketData>('/api/v1/streaming', {
      idleTimeout: 60,
      sendPingsAutomatically: true,
      maxPayloadLength: 64 * 1024,
      upgrade: (res, req, context) => {
        const query = new URLSearchParams(req.getQuery() ?? '');
        const header = req.getHeader('authorization');
        const protocol = req.getHeader('sec-websocket-protocol');
        const key = req.getHeader('sec-websocket-key');
        const extensions = req.getHeader('sec-websocket-extensions');
        const raw =
          /^Bearer\s+(.+)$/i.exec(header.trim())?.[1]?.trim() || query.get('access_token') || protocol || null;
        const stream = query.get('stream');
        let aborted = false;
        res.onAborted(() => (aborted = true));
        inFlight.count++;
        (async () => {
          let viewer: Viewer | null = null;
          if (raw) {
            const auth = await resolveToken(core, raw).catch(() => null);
            if (!auth || (auth.user && (auth.user.disabled || !auth.user.confirmedAt))) return refuse(res, aborted);
            viewer = { token: auth.token, account: auth.account, user: auth.user };
          }
          if (aborted) return;
          const initial = stream
            ? { stream, tag: query.get('tag') ?? undefined, list: query.get('list') ?? undefined }
            : null;
          // Not inside res.cork: uWS's cork reads the HTTP response state after the callback, and
          // when the upgrade reallocated the socket in place it reads the new WebSocket's memory
          // instead, now and then sees "Connection: close" there and drops the fresh socket (1006
          // right after open; uNetworking/uWebSockets#1583, #1929). Its maintainers' advice for
          // an asynchronous upgrade is to call upgrade uncorked.
          res.upgrade<SocketData>({ connection: null, viewer, initial }, key, protocol, extensions, context);
        })()
          .catch((err: unknown) => {
            logger.error({ err }, 'streaming upgrade failed');
            if (!aborted) res.cork(() => res.writeStatus('500 Internal Server Error').end());
          })
          .finally(() => inFlight.count--);
      },
      open: (ws) => {
        const data = ws.getUserData();
        // Sends happen outside uWS callbacks (Redis messages, promises): cork them so they flush now.
        const connection = new Connection(core, subscriptions, data.viewer, (frame) => {
          if (sockets.has(ws))
            ws.cork(() => ws.send('text' in frame && frame.text ? frame.text : JSON.stringify(frame)));
        });
        data.connection = connection;
        sockets.add(ws);
        // The filter also comes with the next sweep: a failure to load it now must not keep the
        // stream from being subscribed. A failed subscription closes the socket (1011), so that
        // the client reconnects instead of waiting on a socket that will never carry anything.
        void connection
          .refreshFilter()
          .catch((err: unknown) => logger.warn({ err }, 'streaming filter load failed'))
          .then(() => (data.initial ? connection.subscribe(data.initial) : undefined))
          .catch((err: unknown) => {
            logger.warn({ err }, 'streaming subscribe failed');
            if (sockets.delete(ws)) ws.end(1011, 'Subscription failed, please reconnect');
          });
      },
      message: (ws, message) => {
        const text = Buffer.from(message).toString('utf8');
        void ws
          .getUserData()
          .connection?.handle(text)
          .catch((err: unknown) => logger.warn({ err }, 'streaming message failed'));
      },
      close: (ws) => {
        sockets.delete(ws);
        void ws.getUserData().connection?.close();
      },
    })
    .get('/api/v1/streaming/health', (res) => {
      // Liveness (and HAProxy's check): fails once MongoDB has been out of reach too long.
      const live = liveness(opts.core.mongoContact);
      text(res, live.status === 200 ? '200 OK' : '503 Service Unavailable', live.body);
    })
    // Browsers preflight an event stream fetched with an Authorization header; Mastodon's streaming
    // server answers with the `cors` package's defaults.
    .options('/api/v1/streaming/*', (res, req) => {
      const asked = req.getHeader('access-control-request-headers');
      res.cork(() => {
        res
          .writeStatus('204 No Content')
          .writeHeader('Access-Control-Allow-Origin', '*')
          .writeHeader('Access-Control-Allow-Methods', 'GET,HEAD,PUT,PATCH,POST,DELETE')
          .writeHeader('Vary', 'Access-Control-Request-Headers');
        if (asked) res.writeHeader('Access-Control-Allow-Headers', asked);
        res.end();
      });
    })
    .get('/api/v1/streaming/*', (res, req) => {
      const path = req
        .getUrl()
        .replace(/^\/api\/v1\/streaming\/?/, '')
        .replace(/\/$/, '');
      const query = new URLSearchParams(req.getQuery() ?? '');
      const header = req.getHeader('authorization');
      const raw = /^Bearer\s+(.+)$/i.exec(header.trim())?.[1]?.trim() || query.get('access_token') || null;
      let closed = false;
      let cleanup = () => {};
      res.onAborted(() => {
        closed = true;
        cleanup();
      });
      const fail = (status: string, error: string) => {
        if (closed) return;
        closed = true;
        res.cork(() =>
          res
            .writeStatus(status)
            .writeHeader('Content-Type', 'application/json')
            .writeHeader('Access-Control-Allow-Origin', '*')
            .end(JSON.stringify({ error })),
        );
      };
      void (async () => {
        const base = SSE_STREAMS[path];
        if (!base) return fail('404 Not Found', 'Unknown stream type');
        const name = query.get('only_media') === 'true' && base.startsWith('public') ? `${base}:media` : base;
        let viewer: Viewer | null = null;
        if (raw) {
          const auth = await resolveToken(core, raw).catch(() => null);
          if (!auth || (auth.user && (auth.user.disabled || !auth.user.confirmedAt)))
            return fail('401 Unauthorized', 'Invalid access token');
          if (!scopesAllow(auth.token.scopes, scopesFor(name)))
            return fail('403 Forbidden', 'Access token does not have the required scopes');
          viewer = { token: auth.token, account: auth.account, user: auth.user };
        }
        const request = { stream: name, tag: query.get('tag') ?? undefined, list: query.get('list') ?? undefined };
        try {
          await resolveStream(core, viewer, request);
        } catch (err) {
          if (err instanceof StreamError) return fail(viewer ? '400 Bad Request' : '401 Unauthorized', err.message);
          throw err;
        }
        if (closed) return;
        res.cork(() => {
          res
            .writeStatus('200 OK')
            .writeHeader('Content-Type', 'text/event-stream')
            .writeHeader('Cache-Control', 'private, no-store')
            .writeHeader('Access-Control-Allow-Origin', '*');
          res.write(':)\n');
        });
        const write = (chunk: string) => {
          if (!closed) res.cork(() => res.write(chunk));
        };
        const connection = new Connection(core, subscriptions, viewer, (frame) => {
          if ('error' in frame) return;
          write(`event: ${frame.event}\ndata: ${frame.payload}\n\n`);
        });
        const beat = setInterval(() => write(':thump\n'), SSE_HEARTBEAT_MS);
        if (viewer?.account) sseConnections.add(connection);
        cleanup = () => {
          clearInterval(beat);
          sse.delete(end);
          sseConnections.delete(connection);
          void connection.close();
        };
        const end = () => {
          if (closed) return;
          closed = true;
          cleanup();
          res.cork(() => res.end());
        };
        sse.add(end);
        await connection.refreshFilter().catch((err: unknown) => logger.warn({ err }, 'streaming filter load failed'));
        await connection.subscribe(request);
      })().catch((err: unknown) => {
        logger.error({ err }, 'streaming (SSE) failed');
        fail('500 Internal Server Error', 'There was a temporary problem serving your request, please try again');
      });
    })
    .get('/metrics', (res) => {
      let aborted = false;
      res.onAborted(() => (aborted = true));
      inFlight.count++;
      registry
        .metrics()
        .then((body) => {
          if (aborted) return;
          res.cork(() => {
            res.writeStatus('200 OK').writeHeader('Content-Type', registry.contentType).end(body);
          });
        })
        .finally(() => inFlight.count--);
    })
    .any('/*', (res) => {
      res.cork(() => {
        res.writeStatus('404 Not Found').writeHeader('Content-Type', 'application/json').end('{"error":"Not found"}');
      });
    });

  return new Promise((resolve, reject) => {
    app.listen(opts.host, opts.port, (token: us_listen_socket | false) => {
      if (!token) return reject(new Error(`streaming: cannot listen on ${opts.host}:${opts.port}`));
      const port = us_socket_local_port(token);
      logger.info({ host: opts.host, port }, 'streaming server listening');
      // Revoked tokens lose their sockets within a sweep; filters follow new blocks and mutes.
      const sweep = setInterval(() => {
        void (async () => {
          const open = [...sockets].filter((ws) => ws.getUserData().viewer);
          if (open.length === 0 && sseConnections.size === 0) return;
          const ids = open.map((ws) => ws.getUserData().viewer!.token._id);
          const revoked = new Set(
            (
              await collection(core.db, accessTokens)
                .find({ _id: { $in: ids }, revokedAt: { $ne: null } }, { projection: { _id: 1 } })
                .toArray()
            ).map((t) => t._id),
          );
          // Suspended accounts and disabled logins lose their sockets too (moderation).
          const barred = await barredAccounts(
            core,
            open.map((ws) => ws.getUserData().viewer!.account?._id).filter((id): id is bigint => id !== undefined),
          );
          const live: Connection[] = [];
          for (const ws of open) {
            const data = ws.getUserData();
            if (revoked.has(data.viewer!.token._id)) {
              sockets.delete(ws);
              ws.end(1008, 'The access token was revoked');
            } else if (data.viewer!.account && barred.has(data.viewer!.account._id)) {
              sockets.delete(ws);
              ws.end(1008, 'Your login is currently disabled');
            } else if (data.connection) live.push(data.connection);
          }
          live.push(...sseConnections);
          // Streaming is using the server as much as an API call is: the user stays fed (hourly
          // per process, as the API does). Not awaited: a failed refresh is tried next sweep.
          for (const c of live)
            if (c.viewer?.user)
              recordActivity(core, c.viewer.user).catch((err: unknown) =>
                logger.warn({ err }, 'activity not recorded'),
              );
          // One batch of queries for every connected viewer's blocks, mutes, languages and filters.
          const accountIds = live.map((c) => c.viewer?.account?._id).filter((id): id is bigint => id !== undefined);
          const loaded = await loadViewerFilters(core, accountIds);
          for (const c of live) {
            const id = c.viewer?.account?._id;
            if (id !== undefined) c.setFilter(loaded.get(id) ?? EMPTY_FILTER);
          }
        })().catch((err: unknown) => logger.warn({ err }, 'streaming sweep failed'));
      }, SWEEP_MS);
      let stopped: Promise<void> | null = null;
      resolve({
        port,
        stop(graceMs = 10_000) {
          stopped ??= (async () => {
            us_listen_socket_close(token);
            clearInterval(sweep);
            for (const ws of [...sockets]) ws.end(1001, 'Server shutting down');
            for (const end of [...sse]) end();
            sockets.clear();
            subscriptions.close();
            const deadline = Date.now() + graceMs;
            while (inFlight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
            app.close();
            logger.info('streaming server stopped');
          })();
          return stopped;
        },
      });
    });
  });
}
