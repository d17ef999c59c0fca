// npm run deploy:check — without Docker or a cluster, and offline apart from the Go module proxy:
//   1. the generated files are fresh (deploy/generate/main.ts --check);
//   2. deploy/compose/compose.yaml against the Compose Specification's JSON schema (ajv), the schema
//      taken from the Go module github.com/compose-spec/compose-go/v2 (schema/compose-spec.json);
//   3. deploy/k8s/*.yaml with kubeconform (strict) against JSON schemas made here from the
//      Kubernetes OpenAPI document in the Go module k8s.io/kubernetes (api/openapi-spec/swagger.json,
//      converted as kubeconform's openapi2jsonschema does: one standalone file per kind) and from
//      KEDA's ScaledObject CRD in github.com/kedacore/keda/v2. kubeconform is installed with
//      `go install` when it is not on the PATH or in $(go env GOPATH)/bin.
// Modules land in the Go module cache; the converted schemas under var/kubeconform-schemas.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse, parseAllDocuments } from 'yaml';
import { staleFiles } from './main.ts';

const KUBERNETES = { module: 'k8s.io/kubernetes', version: 'v1.33.4' };
const KEDA = { module: 'github.com/kedacore/keda/v2', version: 'v2.17.2' };
const COMPOSE = { module: 'github.com/compose-spec/compose-go/v2', version: 'v2.16.2' };
const KUBECONFORM = 'github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0';

const root = join(import.meta.dirname, '..', '..');

function go(): string {
  if (spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0) return 'go';
  if (existsSync('/usr/local/go/bin/go')) return '/usr/local/go/bin/go';
  throw new Error('the manifest check needs Go (for the Go module proxy and kubeconform)');
}

function goOut(args: string[]): string {
  // Outside any module: `go mod download` of a module@version needs no go.mod.
  return execFileSync(go(), args, { encoding: 'utf8', cwd: '/', env: { ...process.env, GOFLAGS: '-mod=mod' } }).trim();
}

function moduleDir(m: { module: string; version: string }): string {
  const info = JSON.parse(goOut(['mod', 'download', '-json', `${m.module}@${m.version}`])) as {
    Dir?: string;
    Error?: string;
  };
  if (!info.Dir) throw new Error(`go mod download ${m.module}@${m.version}: ${info.Error ?? 'no directory'}`);
  return info.Dir;
}

function kubeconform(): string {
  if (spawnSync('kubeconform', ['-v'], { stdio: 'ignore' }).status === 0) return 'kubeconform';
  const bin = join(goOut(['env', 'GOPATH']).split(':')[0], 'bin', 'kubeconform');
  if (!existsSync(bin)) {
    console.log(`installing ${KUBECONFORM} (go install, first run only)`);
    execFileSync(go(), ['install', KUBECONFORM], { stdio: 'inherit', cwd: '/' });
  }
  return bin;
}

type Schema = Record<string, unknown>;

/**
 * A standalone, strict schema for one definition: the definitions it reaches copied in, objects
 * closed to unknown fields (kubeconform's -strict, as the "standalone-strict" schemas), and
 * int-or-string fields accepting both.
 */
function standalone(definitions: Record<string, Schema>, name: string): Schema {
  const reached = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') {
        const ref = v.replace('#/definitions/', '');
        if (!reached.has(ref)) {
          reached.add(ref);
          visit(definitions[ref]);
        }
      } else visit(v);
    }
  };
  visit(definitions[name]);
  const defs = Object.fromEntries([...reached].map((r) => [r, strict(definitions[r])]));
  return { ...(strict(definitions[name]) as Schema), definitions: defs };
}

function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (typeof node !== 'object' || node === null) return node;
  const n = node as Schema;
  if (n.format === 'int-or-string') return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
  const out: Schema = {};
  for (const [k, v] of Object.entries(n)) out[k] = k === 'properties' ? mapValues(v as Schema, strict) : strict(v);
  if (n.properties && n.additionalProperties === undefined && !n['x-kubernetes-preserve-unknown-fields'])
    out.additionalProperties = false;
  return out;
}

function mapValues(o: Schema, f: (v: unknown) => unknown): Schema {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}

/** kubeconform's file names: `<kind>[-<group's first label>]-<version>.json`, and `<group>/<kind>_<version>.json` for CRDs. */
function writeSchemas(dir: string): void {
  if (existsSync(join(dir, '.complete'))) return;
  mkdirSync(join(dir, 'keda.sh'), { recursive: true });
  const swagger = JSON.parse(readFileSync(join(moduleDir(KUBERNETES), 'api/openapi-spec/swagger.json'), 'utf8')) as {
    definitions: Record<string, Schema & { 'x-kubernetes-group-version-kind'?: Array<Record<string, string>> }>;
  };
  for (const [name, def] of Object.entries(swagger.definitions)) {
    for (const gvk of def['x-kubernetes-group-version-kind'] ?? []) {
      const group = gvk.group ? `-${gvk.group.split('.')[0]}` : '';
      writeFileSync(
        join(dir, `${gvk.kind.toLowerCase()}${group}-${gvk.version}.json`),
        JSON.stringify(standalone(swagger.definitions, name)),
      );
    }
  }
  const crd = parse(readFileSync(join(moduleDir(KEDA), 'config/crd/bases/keda.sh_scaledobjects.yaml'), 'utf8')) as {
    spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: Schema } }> };
  };
  for (const v of crd.spec.versions)
    writeFileSync(
      join(dir, 'keda.sh', `scaledobject_${v.name}.json`),
      JSON.stringify(strict(v.schema.openAPIV3Schema)),
    );
  writeFileSync(join(dir, '.complete'), new Date().toISOString());
}

function checkCompose(): string[] {
  const schema = JSON.parse(readFileSync(join(moduleDir(COMPOSE), 'schema/compose-spec.json'), 'utf8')) as Schema;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = ajv.compile(schema);
  const file = join(root, 'deploy/compose/compose.yaml');
  if (validate(parse(readFileSync(file, 'utf8')))) return [];
  return (validate.errors ?? []).map((e) => `compose.yaml${e.instancePath}: ${e.message}`);
}

function checkK8s(): string[] {
  const schemas = join(root, 'var', 'kubeconform-schemas', KUBERNETES.version);
  writeSchemas(schemas);
  const dir = join(root, 'deploy/k8s');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .map((f) => join(dir, f));
  // Each file parses as YAML and names the documents kubeconform is to check.
  for (const f of files)
    for (const d of parseAllDocuments(readFileSync(f, 'utf8')))
      if (d.errors.length) return [`${f}: ${d.errors[0].message}`];
  const run = spawnSync(
    kubeconform(),
    [
      '-strict',
      '-summary',
      '-output',
      'text',
      '-schema-location',
      `${schemas}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
      '-schema-location',
      `${schemas}/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`,
      ...files,
    ],
    { encoding: 'utf8' },
  );
  process.stdout.write(run.stdout);
  return run.status === 0 ? [] : [`kubeconform: ${run.stderr || 'invalid manifests (above)'}`.trim()];
}

function main(): void {
  const problems: string[] = [];
  const stale = staleFiles(root);
  if (stale.length) problems.push(`out of date (run npm run deploy:generate): ${stale.join(', ')}`);
  const compose = checkCompose();
  if (compose.length === 0) console.log('deploy/compose/compose.yaml: valid (Compose Specification)');
  problems.push(...compose, ...checkK8s());
  if (problems.length) {
    for (const p of problems) console.error(p);
    process.exit(1);
  }
  console.log('deployment manifests: fresh and valid');
}

main();
