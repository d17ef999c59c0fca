// The usual set-up of an API test: a test core (real servers, see core.ts) with a listening API
// server, a JSON client for it and, on request, a media directory of its own. `close` removes all.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testConfig } from './config.ts';
import { closeTestCore, createTestCore, type TestCore } from './core.ts';
import { startTestServer, type TestServer } from './fixtures.ts';
import { client, type JsonClient } from './http.ts';

export interface TestApi extends TestCore {
  server: TestServer;
  call: JsonClient;
  /** The MEDIA_DIR of this test (a fresh temporary directory) when asked for. */
  mediaDir: string | null;
  close(): Promise<void>;
}

export async function startTestApi(
  overrides: Record<string, string> = {},
  opts: { mediaDir?: boolean } = {},
): Promise<TestApi> {
  const mediaDir = opts.mediaDir ? await mkdtemp(join(tmpdir(), 'fedisrv-test-media-')) : null;
  const { core, published } = await createTestCore(
    testConfig({ ...(mediaDir ? { MEDIA_DIR: mediaDir } : {}), ...overrides }),
  );
  const removeAll = async (server?: TestServer) => {
    await server?.close();
    await closeTestCore(core);
    if (mediaDir) await rm(mediaDir, { recursive: true, force: true });
  };
  let server: TestServer;
  try {
    server = await startTestServer(core);
  } catch (err) {
    await removeAll();
    throw err;
  }
  return { core, published, server, call: client(server.url), mediaDir, close: () => removeAll(server) };
}
