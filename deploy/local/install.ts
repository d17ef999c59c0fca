// Installs what the local servers need, from the sources these machines reach: Debian packages
// (Redis, ffmpeg), Kafka's broker jars from Maven Central, FerretDB built from the Go module proxy.
// Each step checks first, so a warm machine does nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalInfraSettings } from './settings.ts';

export const KAFKA_VERSION = '3.9.1';
export const FERRETDB_VERSION = 'v1.24.2';

type Say = (message: string) => void;

function have(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v "${command}"`], { stdio: 'ignore' }).status === 0;
}

function run(command: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(command, args, { ...opts, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`${command} could not run: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (exit ${r.status}):\n${r.stderr || r.stdout}`);
  return r.stdout;
}

/** Debian packages for the commands given (command → package); apt-get needs root. */
export function ensureDebianPackages(commands: Record<string, string>, say: Say): void {
  const missing = Object.entries(commands).filter(([command]) => !have(command));
  if (missing.length === 0) return;
  const packages = [...new Set(missing.map(([, pkg]) => pkg))];
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing ${missing.map(([c]) => c).join(', ')}; install with: sudo apt-get install -y --no-install-recommends ${packages.join(' ')}`,
    );
  }
  say(`installing Debian packages: ${packages.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
}

export function kafkaLibDir(s: LocalInfraSettings): string {
  return join(s.cacheDir, `kafka-${KAFKA_VERSION}`, 'libs');
}

/** The broker's runtime classpath, copied out of Maven's repository once. */
export function ensureKafka(s: LocalInfraSettings, say: Say): void {
  const libs = kafkaLibDir(s);
  if (existsSync(join(libs, '.complete'))) return;
  for (const tool of ['java', 'mvn'])
    if (!have(tool)) throw new Error(`Kafka needs ${tool} (Java 17 and Maven) on the PATH`);
  say(`fetching Kafka ${KAFKA_VERSION} from Maven Central (first run only)`);
  const partial = `${libs}.partial`;
  rmSync(partial, { recursive: true, force: true });
  run('mvn', [
    '-B',
    '-q',
    '-f',
    join(s.root, 'deploy/local/kafka/pom.xml'),
    'org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies',
    '-DincludeScope=runtime',
    `-DoutputDirectory=${partial}`,
  ]);
  if (!existsSync(join(partial, `kafka_2.13-${KAFKA_VERSION}.jar`)))
    throw new Error(`Maven did not deliver kafka_2.13-${KAFKA_VERSION}.jar`);
  writeFileSync(join(partial, '.complete'), new Date().toISOString());
  rmSync(libs, { recursive: true, force: true });
  renameSync(partial, libs);
}

export function ferretdbBinary(s: LocalInfraSettings): string {
  return join(s.cacheDir, `ferretdb-${FERRETDB_VERSION}`, 'ferretdb');
}

/**
 * FerretDB 1.x built from its module source. `go install pkg@version` does not work here: the proxy
 * refuses the @v/list request go install makes to look up deprecations. So: download the module,
 * build it in a writable copy, and give it the version file its release build would generate (the
 * binary refuses to start without one).
 */
export function ensureFerretdb(s: LocalInfraSettings, say: Say): void {
  const binary = ferretdbBinary(s);
  if (existsSync(binary)) return;
  if (!have('go')) throw new Error('FerretDB is built with Go: put go on the PATH');
  say(`building FerretDB ${FERRETDB_VERSION} with Go (first run only, a few minutes)`);
  const env = {
    ...process.env,
    CGO_ENABLED: '0',
    GOTOOLCHAIN: 'local',
    GOFLAGS: [process.env.GOFLAGS, '-buildvcs=false'].filter(Boolean).join(' '),
  };
  const module = JSON.parse(
    run('go', ['mod', 'download', '-json', `github.com/FerretDB/FerretDB@${FERRETDB_VERSION}`], {
      cwd: s.cacheDir,
      env,
    }),
  ) as {
    Dir?: string;
    Error?: string;
  };
  if (!module.Dir) throw new Error(`go mod download failed: ${module.Error ?? 'no module directory'}`);
  const source = join(s.cacheDir, `ferretdb-${FERRETDB_VERSION}`, 'src');
  rmSync(source, { recursive: true, force: true });
  cpSync(module.Dir, source, { recursive: true });
  run('chmod', ['-R', 'u+w', source]); // the module cache is read-only
  writeFileSync(join(source, 'build/version/version.txt'), `${FERRETDB_VERSION}\n`);
  run('go', ['build', '-trimpath', '-o', `${binary}.partial`, './cmd/ferretdb'], { cwd: source, env });
  renameSync(`${binary}.partial`, binary);
  rmSync(source, { recursive: true, force: true });
}

export function ensureCacheDir(s: LocalInfraSettings): void {
  mkdirSync(s.cacheDir, { recursive: true });
}
