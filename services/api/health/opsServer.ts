// For processes without the API (`pipeline <name>`): a minimal HTTP server on PORT with the same
// operations endpoints, so every process can be probed and scraped: /health, /health/ready, /metrics.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Core } from '../../core/context.ts';
import { liveness } from '../../core/db/mongoContact.ts';
import { registry } from '../../core/metrics.ts';
import { createReadinessChecks } from './readiness.ts';

export interface OpsServer {
  port: number;
  stop(): Promise<void>;
}

export async function startOpsServer(core: Core, host: string, port: number): Promise<OpsServer> {
  const readiness = createReadinessChecks(core);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, type: string, body: string) =>
      res.writeHead(status, { 'content-type': type }).end(body);
    if (req.method !== 'GET') return answer(405, 'text/plain', 'Method Not Allowed');
    if (path === '/health') {
      // Liveness: fails once MongoDB has been out of reach for MONGO_LIVENESS_SECONDS.
      const live = liveness(core.mongoContact);
      return answer(live.status, 'text/plain', live.body);
    }
    if (path === '/health/ready') {
      return void readiness.check().then((checks) => {
        const ready = Object.values(checks).every((c) => c.status === 'up');
        answer(
          ready ? 200 : 503,
          'application/json',
          JSON.stringify({ status: ready ? 'ready' : 'unavailable', checks }),
        );
      });
    }
    if (path === '/metrics') return void registry.metrics().then((text) => answer(200, registry.contentType, text));
    return answer(404, 'text/plain', 'Not Found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await readiness.close();
    },
  };
}
