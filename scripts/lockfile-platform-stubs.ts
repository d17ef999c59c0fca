// Keeps `npm ci` working with the npm registry mirror these machines use, which lacks some
// platform-specific optional packages (e.g. @swc/core-darwin-arm64). `npm install` leaves such
// packages out of package-lock.json, and `npm ci` then refuses the lockfile as "out of sync".
// This adds a stub entry (version, os/cpu/libc, optional) for every optional dependency the lockfile
// lacks; npm skips them on other platforms, exactly as it would skip the real ones. Run it after
// `npm install` changed the lockfile: `node scripts/lockfile-platform-stubs.ts`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  optionalDependencies?: Record<string, string>;
}

const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openbsd', 'sunos', 'aix', 'openharmony'];
const CPU = ['arm64', 'x64', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'wasm32', 'arm'];

/** Platform fields from a conventional binding package name such as `core-linux-arm-gnueabihf`. */
function platformOf(name: string): Pick<LockEntry, 'os' | 'cpu' | 'libc'> {
  const parts = name.split('/').pop()!.split('-');
  const os = OS.find((o) => parts.includes(o));
  const cpu = CPU.find((c) => parts.includes(c));
  const libc = parts.some((p) => p.startsWith('musl'))
    ? 'musl'
    : parts.some((p) => p.startsWith('gnu'))
      ? 'glibc'
      : undefined;
  return {
    ...(os ? { os: [os] } : {}),
    ...(cpu ? { cpu: [cpu] } : {}),
    ...(libc && os === 'linux' ? { libc: [libc] } : {}),
  };
}

const file = join(process.cwd(), 'package-lock.json');
const lock = JSON.parse(readFileSync(file, 'utf8')) as { packages: Record<string, LockEntry> };
const added: string[] = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    // npm resolves a dependency next to its parent or in any node_modules above it.
    const candidates: string[] = [];
    for (let p = path; ; p = p.slice(0, Math.max(0, p.lastIndexOf('/node_modules/')))) {
      candidates.push(`${p ? `${p}/` : ''}node_modules/${dep}`);
      if (!p.includes('/node_modules/') && p !== '') {
        candidates.push(`node_modules/${dep}`);
        break;
      }
      if (p === '') break;
    }
    if (candidates.some((c) => c in lock.packages)) continue;
    if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) continue; // only exact versions can be stubbed honestly
    const stub: LockEntry = { version: spec, ...platformOf(dep), optional: true };
    if (entry.dev) stub.dev = true;
    lock.packages[`node_modules/${dep}`] = stub;
    added.push(`${dep}@${spec}`);
  }
}
if (added.length > 0) {
  lock.packages = Object.fromEntries(
    Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
  );
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(added.length > 0 ? `lockfile: added platform stubs for ${added.join(', ')}` : 'lockfile: nothing to add');
