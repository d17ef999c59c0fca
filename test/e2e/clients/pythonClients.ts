// Shared by the Python client tests (Mastodon.py, toot): which Python has the clients. Their server
// is support/instance.ts's, whose configured domain is its own listening address, so the URLs it
// hands out (OAuth metadata, media, pagination links) reach it. .ci/run installs the clients into
// the venv below.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

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
