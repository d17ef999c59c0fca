// GET /media_proxy/:id(/:style) (Mastodon's MediaProxyController): a remote attachment as a file of
// ours. Not cached yet (or removed by the cache clean-up): fetched now through the SSRF-safe
// client and processed like an upload; then a redirect to the stored `original` or `small` file.
// Only attachments of statuses anyone may see; anything else, or a file that cannot be fetched, is 404.
// GET /media_proxy/accounts/:id/avatar|header(_static) and /media_proxy/emojis/:id(/static) do the
// same for remote profile images and custom emojis.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { collection } from '../../core/db/mongo.ts';
import { mediaAttachments } from '../../core/model/media.ts';
import { accounts } from '../../core/model/accounts.ts';
import { customEmojis } from '../../core/model/customEmojis.ts';
import { cacheRemoteEmoji } from '../../core/emojis/remoteEmojis.ts';
import { cacheRemoteProfileImage, cachedProfileImage } from '../../core/media/remoteProfileImages.ts';
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

  // A remote account's avatar or header (`…_static`: the still first frame of an animated one).
  app.get(
    '/media_proxy/accounts/:id/:kind',
    {
      config,
      schema: { params: Type.Object({ id: Type.String({ maxLength: 20 }), kind: Type.String({ maxLength: 20 }) }) },
    },
    async (request, reply) => {
      const m = /^(avatar|header)(_static)?$/.exec(request.params.kind);
      if (!m || !/^\d{1,19}$/.test(request.params.id)) throw notFound();
      const account = await collection(core.db, accounts).findOne({ _id: BigInt(request.params.id) });
      if (!account || account.domain === null || account.suspendedAt) throw notFound();
      const kind = m[1] as 'avatar' | 'header';
      const image = cachedProfileImage(account, kind) ?? (await cacheRemoteProfileImage(core, account._id, kind));
      if (!image) throw notFound();
      return reply.redirect(storageFor(core).url(m[2] ? image.staticPath : image.path), 302);
    },
  );

  // A remote custom emoji (`/static`: its still PNG).
  app.get(
    '/media_proxy/emojis/:id',
    { config, schema: { params: Type.Object({ id: Type.String({ maxLength: 20 }) }) } },
    async (request, reply) => reply.redirect(await emojiFile(request.params.id, false), 302),
  );
  app.get(
    '/media_proxy/emojis/:id/static',
    { config, schema: { params: Type.Object({ id: Type.String({ maxLength: 20 }) }) } },
    async (request, reply) => reply.redirect(await emojiFile(request.params.id, true), 302),
  );
  const emojiFile = async (id: string, still: boolean): Promise<string> => {
    if (!/^\d{1,19}$/.test(id)) throw notFound();
    const known = await collection(core.db, customEmojis).findOne({ _id: BigInt(id) });
    if (!known || known.domain === null || known.disabled) throw notFound();
    const emoji = known.imageKey !== '' ? known : await cacheRemoteEmoji(core, known._id);
    if (!emoji || emoji.imageKey === '') throw notFound();
    return storageFor(core).url(still ? emoji.staticKey : emoji.imageKey);
  };
};

export default mediaProxyArea;
