// POST /api/v1/statuses/:id/translate (Mastodon 4.0+): the Translation entity, from the backend
// configured with TRANSLATION_* (services/core/translation/). 404 for statuses the caller cannot
// see or when no backend is configured; 403 for private/direct statuses or an unsupported pair;
// 503 when the backend fails.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId } from '../../core/ids.ts';
import { translateStatus } from '../../core/translation/translate.ts';
import { requireUser } from '../plugins/auth.ts';
import { notFound } from '../errors.ts';
import { READ_STATUSES as READ } from '../scopes.ts';

const TranslationEntity = Type.Object({
  content: Type.String(),
  spoiler_text: Type.String(),
  poll: Type.Optional(Type.Object({ id: Type.String(), options: Type.Array(Type.Object({ title: Type.String() })) })),
  media_attachments: Type.Array(Type.Object({ id: Type.String(), description: Type.String() })),
  detected_source_language: Type.String(),
  language: Type.String(),
  provider: Type.String(),
});

const Lang = Type.Optional(Type.Union([Type.String({ maxLength: 20 }), Type.Null()]));
const TranslateInput = Type.Object({ lang: Lang }, { additionalProperties: true });

const translationArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/statuses/:id/translate',
    {
      config: { auth: READ },
      schema: {
        params: Type.Object({ id: Type.String({ maxLength: 30 }) }),
        querystring: TranslateInput,
        body: Type.Optional(TranslateInput),
        response: { 200: TranslationEntity },
      },
    },
    async (request) => {
      const viewer = requireUser(request);
      const id = parseId(request.params.id);
      if (id === null) throw notFound();
      const lang = request.body?.lang ?? request.query.lang ?? undefined;
      return translateStatus(core, viewer, id, lang || undefined);
    },
  );
};

export default translationArea;
