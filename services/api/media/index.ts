// Media area: uploads (v1 synchronous, v2 asynchronous for slow kinds), status of an upload and
// its description/focus edits. Other users' media answers 404.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AreaOptions } from '../areas.ts';
import { requireUser } from '../plugins/auth.ts';
import { missingParam, notFound, ApiError } from '../errors.ts';
import { enforceRateLimit, RATE_LIMITS } from '../rateLimit.ts';
import { parseId } from '../../core/ids.ts';
import { createMediaAttachment, findOwnMedia, setCustomThumbnail } from '../../core/media/attachments.ts';
import { deleteMediaAttachment } from '../../core/media/removal.ts';
import { updateAttachmentAttributes } from '../../core/media/statusAttachments.ts';
import { MediaAttachmentEntity, presentMediaAttachment } from '../../core/entities/mediaAttachment.ts';
import { AnyIdParams } from '../params.ts';

const write = { auth: { scopes: ['write', 'write:media'], user: 'required' as const } };
// Bodies are parsed by the params plugin (multipart or form or JSON); values are checked in core.
const UploadBody = Type.Object(
  { description: Type.Optional(Type.Unknown()), focus: Type.Optional(Type.Unknown()) },
  { additionalProperties: true },
);

function uploadedFile(request: FastifyRequest): Buffer {
  const file = request.uploads?.file;
  if (!file) throw missingParam('file');
  return file.data;
}

const mediaArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const upload = async (
    request: FastifyRequest,
    reply: { code(n: number): unknown; header(k: string, v: string): unknown },
    synchronous: boolean,
  ) => {
    const { account } = requireUser(request);
    const data = uploadedFile(request);
    const body = (request.body ?? {}) as { description?: unknown; focus?: unknown };
    const thumbnail = request.uploads?.thumbnail?.data ?? null;
    const doc = await createMediaAttachment(core, account._id, data, {
      description: body.description,
      focus: body.focus,
      thumbnail,
      synchronous,
    });
    if (doc.processing !== 'complete') reply.code(202);
    return presentMediaAttachment(core, doc);
  };

  const uploadSchema = { body: UploadBody, response: { 200: MediaAttachmentEntity, 202: MediaAttachmentEntity } };

  app.post('/api/v2/media', { config: write, schema: uploadSchema }, async (request, reply) => {
    const { account } = requireUser(request);
    await enforceRateLimit(core, reply, RATE_LIMITS.mediaUpload, String(account._id));
    return upload(request, reply, false);
  });

  app.post('/api/v1/media', { config: write, schema: uploadSchema }, async (request, reply) => {
    const { account } = requireUser(request);
    await enforceRateLimit(core, reply, RATE_LIMITS.mediaUpload, String(account._id));
    reply.header('deprecation', '@1590969600');
    return upload(request, reply, true);
  });

  app.get(
    '/api/v1/media/:id',
    {
      config: write,
      schema: { params: AnyIdParams, response: { 200: MediaAttachmentEntity, 206: MediaAttachmentEntity } },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const id = parseId(request.params.id);
      if (id === null) throw notFound();
      const doc = await findOwnMedia(core, account._id, id);
      if (doc.processing === 'failed')
        throw new ApiError(
          422,
          doc.processingError
            ? `Validation failed: ${doc.processingError}`
            : 'Error processing thumbnail for uploaded media',
        );
      if (doc.processing !== 'complete') reply.code(206);
      return presentMediaAttachment(core, doc);
    },
  );

  app.put(
    '/api/v1/media/:id',
    {
      config: write,
      schema: {
        params: AnyIdParams,
        body: UploadBody,
        response: { 200: MediaAttachmentEntity, 206: MediaAttachmentEntity },
      },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const id = parseId(request.params.id);
      if (id === null) throw notFound();
      const body = (request.body ?? {}) as { description?: unknown; focus?: unknown };
      const thumbnail = request.uploads?.thumbnail?.data;
      if (thumbnail) await setCustomThumbnail(core, account._id, id, thumbnail);
      const doc = await updateAttachmentAttributes(core, account._id, id, {
        description: body.description,
        focus: body.focus,
      });
      if (doc.processing !== 'complete') reply.code(206);
      return presentMediaAttachment(core, doc);
    },
  );

  // 4.4+: removes an upload no status uses.
  app.delete('/api/v1/media/:id', { config: write, schema: { params: AnyIdParams } }, async (request) => {
    const { account } = requireUser(request);
    const id = parseId(request.params.id);
    if (id === null) throw notFound();
    await deleteMediaAttachment(core, account._id, id);
    return {};
  });
};

export default mediaArea;
