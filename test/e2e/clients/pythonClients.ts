// Shared by the Python client tests (Mastodon.py, toot): which Python has the clients, and a real
// server whose configured domain is its own listening address, so the URLs it hands out (OAuth
// metadata, media, pagination links) reach it. .ci/run installs the clients into the venv below.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../../services/core/config.ts';
import type { Core } from '../../../services/core/context.ts';
import { buildApi } from '../../../services/api/app.ts';
import { testConfig } from '../../support/config.ts';
import type { TestServer } from '../../support/fixtures.ts';

/** The venv .ci/run fills (FEDISRV_PYTHON overrides; else python3 on the PATH). */
export function pythonWithClients(): string {
  if (process.env.FEDISRV_PYTHON) return process.env.FEDISRV_PYTHON;
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  const venv = join(cache, 'fedisrv', 'py-clients', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

/** Whether `python` can import `module` (a Python module name). */
export function canImport(python: string, module: string): boolean {
  return spawnSync(python, ['-c', `import ${module}`], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A test configuration whose LOCAL_DOMAIN is 127.0.0.1:<a free port>, over plain HTTP. */
export async function selfAddressedConfig(overrides: Record<string, string> = {}): Promise<Config> {
  const port = await freePort();
  return testConfig({ LOCAL_DOMAIN: `127.0.0.1:${port}`, LOCAL_HTTPS: 'false', PORT: String(port), ...overrides });
}

/** Listens on the port of the configured domain. */
export async function startSelfAddressedServer(core: Core): Promise<TestServer> {
  const app = await buildApi(core);
  await app.listen({ host: '127.0.0.1', port: core.config.port });
  return { url: core.config.baseUrl, app, close: () => app.close() };
}
