// A whole instance of this server for federation tests: its own database, Redis namespace and
// topics, an API served on a port bound first (listening.ts), so that LOCAL_DOMAIN (127.0.0.1:PORT) and the
// ids it writes (http://127.0.0.1:PORT/users/...) are where it really answers; loopback is allowed
// for its fetches and deliveries (ALLOWED_PRIVATE_ADDRESSES, FEDERATION_ALLOW_HTTP).
import type { Core } from '../../services/core/context.ts';
import { buildApi } from '../../services/api/app.ts';
import { testConfig } from './config.ts';
import { closeTestCore, createTestCore } from './core.ts';
import { client, type JsonClient } from './http.ts';
import { bindServer } from './listening.ts';

export interface TestInstance {
  core: Core;
  url: string;
  domain: string;
  call: JsonClient;
  close(): Promise<void>;
}

export async function startInstance(overrides: Record<string, string> = {}): Promise<TestInstance> {
  const bound = await bindServer();
  const domain = `127.0.0.1:${bound.port}`;
  const { core } = await createTestCore(
    testConfig({
      LOCAL_DOMAIN: domain,
      LOCAL_HTTPS: 'false',
      FEDERATION_ALLOW_HTTP: 'true',
      ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32',
      ...overrides,
    }),
  ).catch(async (err: unknown) => {
    await bound.close();
    throw err;
  });
  const app = await buildApi(core);
  try {
    await bound.serve(app);
  } catch (err) {
    await bound.close();
    await closeTestCore(core);
    throw err;
  }
  const url = `http://${domain}`;
  return {
    core,
    url,
    domain,
    call: client(url),
    close: async () => {
      await app.close();
      await closeTestCore(core);
    },
  };
}
