// GET /media_proxy/:id(/:style) (Mastodon's MediaProxyController): a remote attachment as a file of
// ours. Not cached yet (or removed by the cache clean-up): fetched now through the SSRF-safe
// client and processed like an upload; then a redirect to the stored `original` or `small` file.
// Only attachments of statuses anyone may see; anything else, or a file that cannot be fetched, is 404.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { collection } from '../../core/db/mongo.ts';
import { mediaAttachments } from '../../core/model/media.ts';
import { findVisibleStatus } from '../../core/statuses/visibility.ts';
import { cacheRemoteAttachment, needsRedownload } from '../../core/media/remoteCache.ts';
import { storageFor } from '../../core/media/storage.ts';
import { notFound } from '../errors.ts';

const Params = Type.Object({
  id: Type.String({ maxLength: 20 }),
  style: Type.Optional(Type.String({ maxLength: 20 })),
});

const mediaProxyArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const handler = async (id: string, style: string | undefined) => {
    if (!/^\d{1,19}$/.test(id) || (style !== undefined && style !== 'original' && style !== 'small')) throw notFound();
    let doc = await collection(core.db, mediaAttachments).findOne({ _id: BigInt(id) });
    if (!doc || doc.statusId === null || !(await findVisibleStatus(core, null, doc.statusId))) throw notFound();
    if (needsRedownload(doc)) doc = await cacheRemoteAttachment(core, doc._id);
    const key = style === 'small' ? (doc?.files.small ?? doc?.files.original) : doc?.files.original;
    if (!key) throw notFound();
    return storageFor(core).url(key);
  };
  const config = { auth: { user: 'none' as const } };
  app.get('/media_proxy/:id', { config, schema: { params: Params } }, async (request, reply) =>
    reply.redirect(await handler(request.params.id, undefined), 302),
  );
  app.get('/media_proxy/:id/:style', { config, schema: { params: Params } }, async (request, reply) =>
    reply.redirect(await handler(request.params.id, request.params.style), 302),
  );
};

export default mediaProxyArea;
