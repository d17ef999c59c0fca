// Installs what the local servers need, from the sources these machines reach: Debian packages
// (Redis, ffmpeg), Kafka's broker jars and the embedded MongoDB-wire server's jars from Maven
// Central (the server's own Java sources compiled with javac), and, only for migrating an old
// var/ferretdb, FerretDB built from the Go module proxy. Each step checks first, so a warm machine
// does nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalInfraSettings } from './settings.ts';

export const KAFKA_VERSION = '3.9.1';
export const FERRETDB_VERSION = 'v1.24.2';
export const MONGO_JAVA_SERVER_VERSION = '1.47.0';

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

/** Copies a pom's runtime dependencies out of Maven's repository into `libs`, once. */
function ensureMavenLibs(pom: string, libs: string, expectJar: string, what: string, say: Say): void {
  if (existsSync(join(libs, '.complete'))) return;
  for (const tool of ['java', 'mvn'])
    if (!have(tool)) throw new Error(`${what} needs ${tool} (Java 17 and Maven) on the PATH`);
  say(`fetching ${what} from Maven Central (first run only)`);
  const partial = `${libs}.partial`;
  rmSync(partial, { recursive: true, force: true });
  run('mvn', [
    '-B',
    '-q',
    '-f',
    pom,
    'org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies',
    '-DincludeScope=runtime',
    `-DoutputDirectory=${partial}`,
  ]);
  if (!existsSync(join(partial, expectJar))) throw new Error(`Maven did not deliver ${expectJar}`);
  writeFileSync(join(partial, '.complete'), new Date().toISOString());
  rmSync(libs, { recursive: true, force: true });
  renameSync(partial, libs);
}

/** The broker's runtime classpath. */
export function ensureKafka(s: LocalInfraSettings, say: Say): void {
  ensureMavenLibs(
    join(s.root, 'deploy/local/kafka/pom.xml'),
    kafkaLibDir(s),
    `kafka_2.13-${KAFKA_VERSION}.jar`,
    `Kafka ${KAFKA_VERSION}`,
    say,
  );
}

export function mongoLibDir(s: LocalInfraSettings): string {
  return join(s.cacheDir, `mongo-java-server-${MONGO_JAVA_SERVER_VERSION}`, 'libs');
}

const MONGO_SOURCES = 'deploy/local/mongo/src';

/** Where the embedded server's classes are compiled to: one directory per version of its sources. */
export function mongoClassesDir(s: LocalInfraSettings): string {
  const dir = join(s.root, MONGO_SOURCES, 'fedisrv/mongo');
  const hash = createHash('sha256');
  for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(join(dir, file)));
  return join(s.cacheDir, `embedded-mongo-${hash.digest('hex').slice(0, 16)}`);
}

/** mongo-java-server's jars and this project's extension of it (deploy/local/mongo/src), compiled. */
export function ensureMongoServer(s: LocalInfraSettings, say: Say): void {
  const libs = mongoLibDir(s);
  ensureMavenLibs(
    join(s.root, 'deploy/local/mongo/pom.xml'),
    libs,
    `mongo-java-server-core-${MONGO_JAVA_SERVER_VERSION}.jar`,
    `mongo-java-server ${MONGO_JAVA_SERVER_VERSION}`,
    say,
  );
  const classes = mongoClassesDir(s);
  if (existsSync(join(classes, '.complete'))) return;
  if (!have('javac')) throw new Error('the embedded MongoDB-wire server is compiled with javac (a JDK 17)');
  say('compiling the embedded MongoDB-wire server');
  const dir = join(s.root, MONGO_SOURCES, 'fedisrv/mongo');
  const partial = `${classes}.partial`;
  rmSync(partial, { recursive: true, force: true });
  const sources = readdirSync(dir)
    .filter((f) => f.endsWith('.java'))
    .map((f) => join(dir, f));
  run('javac', ['-nowarn', '-d', partial, '-cp', `${libs}/*`, ...sources]);
  writeFileSync(join(partial, '.complete'), new Date().toISOString());
  rmSync(classes, { recursive: true, force: true });
  renameSync(partial, classes);
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
