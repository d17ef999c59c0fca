// `npm run schemas`: checks every .avsc, refuses an incompatible change, keeps each new written form
// of a schema as the next schemas/history/<Name>/v<N>.avsc, and writes schemas/index.ts and
// schemas/catalog.ts. Adding an event: write schemas/<Name>.avsc, run `npm run schemas`.
// With `--check` it writes nothing and exits 1 when anything is stale (the unit test runs that).
import { writeFileSync, mkdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadSchemaSources, SchemaError, type SchemaSources } from './sources.ts';
import { checkCompatibility, isInHistory } from './compat.ts';
import { renderAll } from './build.ts';

const dir = import.meta.dirname;
const checkOnly = process.argv.includes('--check');

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

let sources: SchemaSources;
try {
  sources = loadSchemaSources(dir);
} catch (err) {
  if (err instanceof SchemaError) fail(err.message);
  throw err;
}

const problems = checkCompatibility(sources);
if (problems.length > 0) {
  fail(
    `Incompatible schema changes (add a default to new fields, keep removed fields' defaults):\n` +
      problems.map((p) => `  ${p.name}${p.version ? ` v${p.version}` : ''}: ${p.message}`).join('\n'),
  );
}

const unkept = sources.current.filter((c) => !isInHistory(sources, c.name));
if (checkOnly && unkept.length > 0) fail(`not kept in schemas/history: ${unkept.map((c) => c.name).join(', ')}`);
for (const cur of unkept) {
  const version = sources.history.filter((h) => h.name === cur.name).length + 1;
  mkdirSync(join(dir, 'history', cur.name), { recursive: true });
  writeFileSync(join(dir, 'history', cur.name, `v${version}.avsc`), readFileSync(cur.file));
  process.stdout.write(`schemas/history/${cur.name}/v${version}.avsc: new version kept\n`);
}

sources = loadSchemaSources(dir);
const { index, catalog } = await renderAll(sources, dir);
if (checkOnly) {
  const stale = Object.entries({ 'index.ts': index, 'catalog.ts': catalog })
    .filter(([file, code]) => !existsSync(join(dir, file)) || readFileSync(join(dir, file), 'utf8') !== code)
    .map(([file]) => `schemas/${file}`);
  if (stale.length > 0) fail(`stale: ${stale.join(', ')} (run \`npm run schemas\`)`);
  process.stdout.write('schemas: generated files are up to date\n');
  process.exit(0);
}
writeFileSync(join(dir, 'index.ts'), index);
writeFileSync(join(dir, 'catalog.ts'), catalog);
process.stdout.write(`schemas/index.ts and schemas/catalog.ts written (${sources.current.length} events)\n`);
