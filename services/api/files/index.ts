// Serves files of the local storage driver at /system/<key> (what LocalStorage.url points at).
// Keys are checked against the storage's own safe-key rule: no traversal, no absolute paths.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { isSafeKey, storageFor } from '../../core/media/storage.ts';
import { notFound } from '../errors.ts';

const filesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get('/system/*', async (request, reply) => {
    const key = (request.params as { '*': string })['*'];
    const storage = storageFor(core);
    // Raw uploads waiting for processing are never served.
    if (!isSafeKey(key) || key.includes('/upload/')) throw notFound();
    if (storage.driver !== 'local') return reply.redirect(storage.url(key), 301);
    const obj = await storage.stream(key);
    if (!obj) throw notFound();
    reply.header('content-type', obj.contentType);
    reply.header('content-length', String(obj.size));
    reply.header('cache-control', 'public, max-age=31536000, immutable');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('content-security-policy', "default-src 'none'; form-action 'none'");
    return reply.send(obj.body);
  });
};

export default filesArea;
