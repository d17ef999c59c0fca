// Instance area: /api/v1/instance, /api/v2/instance and the /api/v1/instance/* documents — public,
// cacheable descriptions every client reads at start. The rendered documents are cached in Redis
// (services/core/instance/cache.ts) and dropped whenever an administrator changes what they show.
import { Type } from '@sinclair/typebox';
import sharp from 'sharp';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AreaOptions } from '../areas.ts';
import { cachedDocument } from '../../core/instance/cache.ts';
import { instancePeers } from '../../core/instance/peers.ts';
import { instanceActivity } from '../../core/instance/activity.ts';
import { KNOWN_LANGUAGES } from '../../core/instance/languages.ts';
import { translationLanguages } from '../../core/translation/translate.ts';
import { emojiUri, findEnabledLocalEmoji, listCustomEmojis } from '../../core/emojis/emojis.ts';
import { parseId } from '../../core/ids.ts';
import { storageFor } from '../../core/media/storage.ts';
import { renderEmoji } from '../../core/activitypub/render/actor.ts';
import { AS_CONTEXT, withContext } from '../../core/activitypub/render/context.ts';
import { notFound, unauthorized } from '../errors.ts';
import { CustomEmojiEntity } from '../../core/entities/account.ts';
import { InstanceEntity, InstanceV1Entity, RuleEntity } from '../../core/entities/instance.ts';
import {
  extendedDescription,
  instanceRules,
  instanceV1,
  instanceV2,
  moderatedServers,
  privacyPolicy,
  termsOfService,
} from '../../core/instance/publicDocuments.ts';
import { getInstanceSettings } from '../../core/instance/settings.ts';

const SLOW_DOCUMENT_SECONDS = 3600;

const instanceArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const publicCache = 'public, max-age=60';
  const open = { config: { auth: { user: 'none' as const } } };
  /** The handler of a public document: what `load` answers, cacheable for a minute. */
  const publicDocument =
    <T>(load: () => Promise<T> | T) =>
    async (_request: FastifyRequest, reply: FastifyReply): Promise<T> => {
      const doc = await load();
      reply.header('cache-control', publicCache);
      return doc;
    };

  app.get(
    '/api/v2/instance',
    { ...open, schema: { response: { 200: InstanceEntity } } },
    publicDocument(() => instanceV2(core)),
  );

  app.get('/api/v1/instance', { ...open, schema: { response: { 200: InstanceV1Entity } } }, async (_request, reply) => {
    reply.header('cache-control', publicCache);
    reply.header('deprecation', '@1667260800'); // deprecated since 4.0 (RFC 9745)
    return instanceV1(core);
  });

  app.get(
    '/api/v1/instance/rules',
    { ...open, schema: { response: { 200: Type.Array(RuleEntity) } } },
    publicDocument(() => instanceRules(core)),
  );

  app.get(
    '/api/v1/instance/peers',
    { ...open, schema: { response: { 200: Type.Array(Type.String()) } } },
    publicDocument(async () => {
      if (core.config.limitedFederationMode || !(await getInstanceSettings(core)).peersApiEnabled) throw notFound();
      return cachedDocument(core, 'peers', SLOW_DOCUMENT_SECONDS, () => instancePeers(core));
    }),
  );

  const Week = Type.Object({
    week: Type.String(),
    statuses: Type.String(),
    logins: Type.String(),
    registrations: Type.String(),
  });
  app.get(
    '/api/v1/instance/activity',
    { ...open, schema: { response: { 200: Type.Array(Week) } } },
    publicDocument(async () => {
      if (core.config.limitedFederationMode || !(await getInstanceSettings(core)).activityApiEnabled) throw notFound();
      return cachedDocument(core, 'activity', SLOW_DOCUMENT_SECONDS, () => instanceActivity(core));
    }),
  );

  const HtmlDocument = Type.Object({ updated_at: Type.Union([Type.String(), Type.Null()]), content: Type.String() });
  app.get(
    '/api/v1/instance/extended_description',
    { ...open, schema: { response: { 200: HtmlDocument } } },
    publicDocument(() => extendedDescription(core)),
  );

  app.get(
    '/api/v1/instance/privacy_policy',
    { ...open, schema: { response: { 200: HtmlDocument } } },
    publicDocument(() => privacyPolicy(core)),
  );

  const TermsOfService = Type.Object({
    effective_date: Type.String(),
    effective: Type.Boolean(),
    content: Type.String(),
    succeeded_by: Type.Union([Type.String(), Type.Null()]),
  });
  const terms = () => termsOfService(core);
  app.get(
    '/api/v1/instance/terms_of_service',
    { ...open, schema: { response: { 200: TermsOfService } } },
    publicDocument(async () => {
      const doc = await terms();
      if (!doc) throw notFound();
      return doc;
    }),
  );
  app.get(
    '/api/v1/instance/terms_of_service/:date',
    {
      ...open,
      schema: { params: Type.Object({ date: Type.String({ maxLength: 100 }) }), response: { 200: TermsOfService } },
    },
    async (request) => {
      const doc = await terms();
      if (!doc || doc.effective_date !== request.params.date) throw notFound();
      return doc;
    },
  );

  app.get(
    '/api/v1/instance/languages',
    { ...open, schema: { response: { 200: Type.Array(Type.Object({ code: Type.String(), name: Type.String() })) } } },
    publicDocument(() => [...KNOWN_LANGUAGES]),
  );

  app.get(
    '/api/v1/instance/translation_languages',
    { ...open, schema: { response: { 200: Type.Record(Type.String(), Type.Array(Type.String())) } } },
    publicDocument(() => translationLanguages(core)),
  );

  const DomainBlock = Type.Object({
    domain: Type.String(),
    digest: Type.String(),
    severity: Type.String(),
    comment: Type.Optional(Type.String()),
  });
  app.get(
    '/api/v1/instance/domain_blocks',
    { config: { auth: { user: 'optional' as const } }, schema: { response: { 200: Type.Array(DomainBlock) } } },
    async (request) => {
      const servers = await moderatedServers(core, request.auth?.user != null);
      if (servers === 'disabled') throw notFound();
      if (servers === 'login') throw unauthorized('This API requires an authenticated user');
      return servers;
    },
  );

  app.get(
    '/api/v1/custom_emojis',
    { ...open, schema: { response: { 200: Type.Array(CustomEmojiEntity) } } },
    publicDocument(() => listCustomEmojis(core)),
  );

  // The default server thumbnail (Instance.thumbnail until an administrator uploads one), drawn once.
  let defaultThumbnail: Promise<Buffer> | null = null;
  app.get('/packs/media/images/preview.png', open, async (_request, reply) => {
    defaultThumbnail ??= sharp({ create: { width: 1200, height: 630, channels: 3, background: '#282c37' } })
      .png()
      .toBuffer();
    reply.header('content-type', 'image/png').header('cache-control', 'public, max-age=86400');
    return reply.send(await defaultThumbnail);
  });

  // A local emoji as ActivityPub `Emoji` (the id its Emoji tags carry), as Mastodon's /emojis/:id.
  app.get(
    '/emojis/:id',
    { ...open, schema: { params: Type.Object({ id: Type.String({ maxLength: 30 }) }) } },
    async (request, reply) => {
      const id = parseId(request.params.id);
      const doc = id === null ? null : await findEnabledLocalEmoji(core, id);
      if (!doc) throw notFound();
      reply.type('application/activity+json; charset=utf-8');
      return JSON.stringify(
        withContext(
          [AS_CONTEXT, { toot: 'http://joinmastodon.org/ns#', Emoji: 'toot:Emoji' }],
          renderEmoji({
            shortcode: doc.shortcode,
            url: storageFor(core).url(doc.imageKey),
            mediaType: doc.contentType,
            uri: emojiUri(core, doc),
            updatedAt: doc.updatedAt,
          }),
        ),
      );
    },
  );
};

export default instanceArea;
