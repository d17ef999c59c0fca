// GET /media_proxy/:id(/:style) (Mastodon's MediaProxyController): a remote attachment as a file of
// ours. Not cached yet (or removed by the cache clean-up): fetched now through the SSRF-safe
// client and processed like an upload; then a redirect to the stored `original` or `small` file.
// As Mastodon authorizes `status.show?` for the current user: a private or direct status's media are
// served to who may see the status, signed in by the pages' session cookie (what an <img> on our
// pages sends) or a bearer token; to anyone else, as for a missing file or one that cannot be
// fetched, 404.
// GET /media_proxy/accounts/:id/avatar|header(_static) and /media_proxy/emojis/:id(/static) do the
// same for remote profile images and custom emojis.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { proxiedAttachmentKey, proxiedEmojiKey, proxiedProfileImageKey } from '../../core/media/proxy.ts';
import { storageFor } from '../../core/media/storage.ts';
import { notFound } from '../errors.ts';
import { mediaViewer } from './viewer.ts';

const Params = Type.Object({
  id: Type.String({ maxLength: 20 }),
  style: Type.Optional(Type.String({ maxLength: 20 })),
});

const mediaProxyArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const handler = async (request: FastifyRequest, id: string, style: string | undefined) => {
    if (!/^\d{1,19}$/.test(id) || (style !== undefined && style !== 'original' && style !== 'small')) throw notFound();
    const key = await proxiedAttachmentKey(
      core,
      await mediaViewer(core, request),
      BigInt(id),
      style === 'small' ? 'small' : 'original',
    );
    return storageFor(core).url(key);
  };
  const config = { auth: { user: 'none' as const } };
  // A token is read when sent (and a bad one ignored, as for a page): it may show private media.
  const attachmentConfig = { auth: { scopes: ['read', 'read:statuses'], user: 'optional' as const } };
  app.get('/media_proxy/:id', { config: attachmentConfig, schema: { params: Params } }, async (request, reply) =>
    reply.redirect(await handler(request, request.params.id, undefined), 302),
  );
  app.get('/media_proxy/:id/:style', { config: attachmentConfig, schema: { params: Params } }, async (request, reply) =>
    reply.redirect(await handler(request, request.params.id, request.params.style), 302),
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
      const key = await proxiedProfileImageKey(
        core,
        BigInt(request.params.id),
        m[1] as 'avatar' | 'header',
        m[2] !== undefined,
      );
      return reply.redirect(storageFor(core).url(key), 302);
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
    return storageFor(core).url(await proxiedEmojiKey(core, BigInt(id), still));
  };
};

export default mediaProxyArea;
