// postinstall: makes uWebSockets.js load on glibc older than 2.38 (Debian 12 has 2.36).
//
// The binaries come from the npm registry republish `@btc-vision/uwebsockets.js@20.57.0` (installed as
// `uWebSockets.js`, pinned by integrity in package-lock.json). They were built on a glibc 2.38 host
// and need only three symbols from it: the C23 variants `__isoc23_strtol`, `__isoc23_strtoul` and
// `__isoc23_sscanf`. For each binary of this machine's architecture this step
//   1. marks the GLIBC_2.38 version need as weak (VER_FLG_WEAK in `.gnu.version_r`),
//   2. adds a tiny shim library next to it that forwards those three symbols to their pre-C23
//      counterparts (the only difference, `0b` prefixes, is irrelevant here), found via RUNPATH $ORIGIN.
// It does nothing where glibc is 2.38 or newer, and is idempotent (npm install may run it again).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { weakenVersionNeed } from './elf-verneed.ts';

const SHIM = 'libisoc23shim.so';
const NEEDED_VERSION = 'GLIBC_2.38';
const SHIM_SOURCE = `
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
long __isoc23_strtol(const char *s, char **end, int base) { return strtol(s, end, base); }
unsigned long __isoc23_strtoul(const char *s, char **end, int base) { return strtoul(s, end, base); }
int __isoc23_sscanf(const char *s, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = vsscanf(s, format, ap);
  va_end(ap);
  return n;
}
`;

function log(message: string): void {
  console.log(`uws-compat: ${message}`);
}

function fail(message: string): never {
  console.error(`uws-compat: ${message}`);
  process.exit(1);
}

function glibcVersion(): [number, number] | null {
  const header = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header;
  const m = /^(\d+)\.(\d+)/.exec(header?.glibcVersionRuntime ?? '');
  return m ? [Number(m[1]), Number(m[2])] : null;
}

function have(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** gcc, the C headers and patchelf; installed from Debian when missing and we are root. */
function ensureTools(): void {
  const missing = ['gcc', 'patchelf'].filter((c) => !have(c));
  const headers = existsSync('/usr/include/stdio.h');
  if (missing.length === 0 && headers) return;
  const packages = ['gcc', 'libc6-dev', 'patchelf'];
  if (process.getuid?.() !== 0) {
    fail(
      `needs ${packages.join(', ')}; install them with: sudo apt-get install -y --no-install-recommends ${packages.join(' ')}`,
    );
  }
  log(`installing ${packages.join(', ')} from Debian`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { stdio: 'inherit', env });
}

function patchelf(args: string[]): string {
  return execFileSync('patchelf', args, { encoding: 'utf8' }).trim();
}

function main(): void {
  if (process.platform !== 'linux') return;
  const glibc = glibcVersion();
  if (glibc === null) return log('not a glibc system, nothing to do');
  if (glibc[0] > 2 || (glibc[0] === 2 && glibc[1] >= 38))
    return log(`glibc ${glibc.join('.')} is new enough, nothing to do`);

  const dir = join(process.cwd(), 'node_modules', 'uWebSockets.js');
  if (!existsSync(dir)) return log('uWebSockets.js is not installed, nothing to do');
  const binaries = readdirSync(dir).filter((f) => f.startsWith(`uws_linux_${process.arch}_`) && f.endsWith('.node'));

  // Already done? (npm install re-runs postinstall over an unchanged package.)
  const pending = binaries.filter((f) => {
    const file = join(dir, f);
    return (
      weakenVersionNeed(readFileSync(file), NEEDED_VERSION, { dryRun: true }) ||
      !existsSync(join(dir, SHIM)) ||
      !hasShim(file)
    );
  });
  if (pending.length === 0) return verify(dir);

  ensureTools();
  const build = mkdtempSync(join(tmpdir(), 'uws-compat-'));
  try {
    writeFileSync(join(build, 'shim.c'), SHIM_SOURCE);
    execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-o', join(build, SHIM), join(build, 'shim.c')], {
      stdio: 'inherit',
    });
    copyFileSync(join(build, SHIM), join(dir, SHIM));
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
  for (const f of pending) {
    const file = join(dir, f);
    const bytes = readFileSync(file);
    if (weakenVersionNeed(bytes, NEEDED_VERSION)) writeFileSync(file, bytes);
    // Two separate calls: patchelf 0.14 writes a wrong RUNPATH when both are given at once.
    if (!patchelf(['--print-needed', file]).split('\n').includes(SHIM)) patchelf(['--add-needed', SHIM, file]);
    if (patchelf(['--print-rpath', file]) !== '$ORIGIN') patchelf(['--set-rpath', '$ORIGIN', file]);
    log(`patched ${f}`);
  }
  verify(dir);
}

function hasShim(file: string): boolean {
  if (!have('patchelf')) return false;
  return (
    patchelf(['--print-needed', file]).split('\n').includes(SHIM) && patchelf(['--print-rpath', file]) === '$ORIGIN'
  );
}

/** Loads the package in a child (the running Node may be another version than the one npm scripts use). */
function verify(dir: string): void {
  const probe = spawnSync(
    process.execPath,
    ['-e', `require(${JSON.stringify(dir)}); console.log(process.versions.modules)`],
    {
      encoding: 'utf8',
    },
  );
  if (probe.status !== 0) fail(`uWebSockets.js still does not load on Node ${process.version}:\n${probe.stderr}`);
  log(`uWebSockets.js loads on Node ${process.version} (abi ${probe.stdout.trim()})`);
}

main();
