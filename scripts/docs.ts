// `npm run docs`: writes docs/ROUTES.md and docs/EVENTS.md (scripts/docsIndex.ts) from a throwaway
// core on the local servers (`npm run infra:start` first, or REDIS_URL / KAFKA_BROKERS / MONGO_URL).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildApi } from '../services/api/app.ts';
import { testConfig } from '../test/support/config.ts';
import { closeTestCore, createTestCore } from '../test/support/core.ts';
import { collectRoutes, renderEvents, renderRoutes } from './docsIndex.ts';

const docs = join(import.meta.dirname, '..', 'docs');
const { core } = await createTestCore(testConfig());
try {
  writeFileSync(join(docs, 'ROUTES.md'), renderRoutes(await collectRoutes(() => buildApi(core))));
  writeFileSync(join(docs, 'EVENTS.md'), renderEvents());
} finally {
  await closeTestCore(core);
}
console.log('wrote docs/ROUTES.md and docs/EVENTS.md');
