// An HTTP server bound to port 0 before the app it serves exists, for in-process servers whose
// configuration names their own address (LOCAL_DOMAIN, an OAuth redirect URI): the kernel picks the
// port and it stays bound, so nothing can take it between choosing and serving.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface BoundServer {
  /** The port the kernel gave. */
  port: number;
  /** Serves `app` here from now on; closing the app closes this server. */
  serve(app: FastifyInstance): Promise<void>;
  /** Closes the server (for when no app came to serve). */
  close(): Promise<void>;
}

export async function bindServer(host = '127.0.0.1'): Promise<BoundServer> {
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const close = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  return {
    port: (server.address() as AddressInfo).port,
    async serve(app) {
      app.addHook('onClose', close);
      await app.ready();
      // What Fastify's own server would call for each request (Fastify's `routing`).
      server.on('request', app.routing);
    },
    close,
  };
}
