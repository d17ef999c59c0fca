// Every /api route must declare who may call it; forgetting is a start-up error.
import Fastify from 'fastify';
import authPlugin from '../../../services/api/plugins/auth.ts';
import { createTestCore, closeTestCore } from '../../support/core.ts';
import type { Core } from '../../../services/core/context.ts';

let core: Core;
beforeAll(async () => {
  ({ core } = await createTestCore());
});
afterAll(async () => {
  await closeTestCore(core);
});

it('refuses to start with an /api route that declares no auth requirement', async () => {
  const app = Fastify();
  await app.register(authPlugin, { core });
  app.get('/api/v1/forgotten', async () => ({}));
  app.get('/api/v1/public', { config: { auth: { user: 'none' } } }, async () => ({}));
  app.get('/not-api', async () => ({}));
  await expect(app.ready()).rejects.toThrow('API routes without an auth declaration: GET /api/v1/forgotten');
  await app.close().catch(() => undefined);
});

it('starts when every /api route declares one', async () => {
  const app = Fastify();
  await app.register(authPlugin, { core });
  app.get('/api/v1/public', { config: { auth: { user: 'none' } } }, async () => ({}));
  app.get('/api/v1/mine', { config: { auth: { scopes: ['read'] } } }, async () => ({}));
  await expect(app.ready()).resolves.toBeDefined();
  await app.close();
});
