// The `streaming` role's server: uWebSockets.js (see README, "uWebSockets.js", for where the binary
// comes from). For now it answers Mastodon's streaming health check and serves /metrics; the
// streaming API comes later.
import {
  App,
  us_listen_socket_close,
  us_socket_local_port,
  type HttpResponse,
  type TemplatedApp,
  type us_listen_socket,
} from 'uWebSockets.js';
import type { Logger } from '../core/logger.ts';
import { registry } from '../core/metrics.ts';

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
  const app: TemplatedApp = App()
    .get('/api/v1/streaming/health', (res) => text(res, '200 OK', 'OK'))
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
      let stopped: Promise<void> | null = null;
      resolve({
        port,
        stop(graceMs = 10_000) {
          stopped ??= (async () => {
            us_listen_socket_close(token);
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
