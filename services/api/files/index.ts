// Serves files of the local storage driver at /system/<key> (what LocalStorage.url points at), with
// byte ranges (video players, Safari in particular, need them). Keys are checked against the
// storage's own safe-key rule: no traversal, no absolute paths. Raw uploads are never served.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { isSafeKey, storageFor, type ByteRange } from '../../core/media/storage.ts';
import { notFound } from '../errors.ts';

/** A single `bytes=` range; null for none or one we do not serve (multiple ranges: whole file). */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

const filesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get('/system/*', async (request, reply) => {
    const key = (request.params as { '*': string })['*'];
    const storage = storageFor(core);
    if (!isSafeKey(key) || key.includes('/upload/')) throw notFound();
    if (storage.driver !== 'local') return reply.redirect(storage.url(key), 301);
    const whole = await storage.stream(key);
    if (!whole) throw notFound();
    reply.header('accept-ranges', 'bytes');
    reply.header('cache-control', 'public, max-age=31536000, immutable');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('content-security-policy', "default-src 'none'; form-action 'none'");
    reply.header('content-type', whole.contentType);
    const range = parseRange(request.headers.range, whole.totalSize);
    if (range === 'unsatisfiable') {
      whole.body.destroy();
      return reply.code(416).header('content-range', `bytes */${whole.totalSize}`).send();
    }
    if (range) {
      whole.body.destroy();
      const part = await storage.stream(key, range);
      if (!part) throw notFound();
      reply.code(206);
      reply.header('content-range', `bytes ${range.start}-${range.start + part.size - 1}/${part.totalSize}`);
      reply.header('content-length', String(part.size));
      return reply.send(part.body);
    }
    reply.header('content-length', String(whole.size));
    return reply.send(whole.body);
  });
};

export default filesArea;
