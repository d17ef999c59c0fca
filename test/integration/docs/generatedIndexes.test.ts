// docs/ROUTES.md and docs/EVENTS.md must match the code: a new route or event, a changed scope or a
// new consumer makes this fail until `npm run docs` is run again.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildApi } from '../../../services/api/app.ts';
import { collectRoutes, renderEvents, renderRoutes } from '../../../scripts/docsIndex.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import type { Core } from '../../../services/core/context.ts';

const docs = join(__dirname, '..', '..', '..', 'docs');
const STALE = 'is stale: run `npm run docs` and commit the result';

describe('generated indexes', () => {
  let core: Core;
  beforeAll(async () => {
    ({ core } = await createTestCore());
  });
  afterAll(async () => {
    if (core) await closeTestCore(core);
  });

  it('docs/ROUTES.md lists every route with its scopes, permission and file', async () => {
    const rows = await collectRoutes(() => buildApi(core));
    expect(rows.length).toBeGreaterThan(250);
    // Every route names the file that declares it, and that file writes its path literally (a
    // newcomer finds an endpoint by searching for its path).
    const root = join(__dirname, '..', '..', '..');
    const literal = (r: { path: string; file: string }) =>
      r.file !== '' && [`'${r.path}'`, `"${r.path}"`].some((q) => readFileSync(join(root, r.file), 'utf8').includes(q));
    expect(rows.filter((r) => !literal(r)).map((r) => `${r.method} ${r.path} ${r.file}`)).toEqual([]);
    const status = rows.find((r) => r.method === 'POST' && r.path === '/api/v1/statuses');
    expect(status).toMatchObject({ scopes: 'write or write:statuses', file: 'services/api/statuses/index.ts' });
    const generated = renderRoutes(rows);
    expect({ file: 'docs/ROUTES.md', upToDate: readFileSync(join(docs, 'ROUTES.md'), 'utf8') === generated }).toEqual({
      file: 'docs/ROUTES.md',
      upToDate: true,
    });
  });

  it(`docs/EVENTS.md lists every event with its topic, publishers and consumers (otherwise it ${STALE})`, () => {
    const generated = renderEvents();
    expect(generated).toMatch(
      /\| `StatusCreated` \| `statuses` \| `services\/core\/statuses\/events.ts` \| .*`fanout`/,
    );
    expect(readFileSync(join(docs, 'EVENTS.md'), 'utf8') === generated).toBe(true);
  });
});
