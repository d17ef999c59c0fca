// GET /api/oembed?url=…: oEmbed for this server's status pages, as Mastodon answers it (JSON,
// type `rich`, cache_age a day), with an iframe of the status's /embed page as `html`. Status
// pages name it in their discovery link (services/web/public).
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { parseId } from '../../core/ids.ts';
import { findLocalAccountByUsername } from '../../core/accounts/create.ts';
import { findVisibleStatus } from '../../core/statuses/visibility.ts';
import { escapeHtml } from '../../core/text/formatStatus.ts';
import { ApiError, notFound } from '../errors.ts';

const DEFAULT_WIDTH = 400;

const oembedArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const base = core.config.baseUrl;
  app.get(
    '/api/oembed',
    {
      config: { auth: { user: 'none' as const } },
      schema: {
        querystring: Type.Object(
          {
            url: Type.Optional(Type.String({ maxLength: 2000 })),
            format: Type.Optional(Type.String({ maxLength: 10 })),
            maxwidth: Type.Optional(Type.String({ maxLength: 10 })),
            maxheight: Type.Optional(Type.String({ maxLength: 10 })),
          },
          { additionalProperties: true },
        ),
      },
    },
    async (request, reply) => {
      const q = request.query;
      // Mastodon answers JSON only; another format is Rails' UnknownFormat: 406 Not Acceptable.
      if (q.format && q.format !== 'json') throw new ApiError(406, 'Only the json format is supported');
      if (!q.url) throw new ApiError(400, 'Missing url parameter');
      // The status pages' URLs (/@user/ID) and the ActivityPub ids (/users/user/statuses/ID).
      let path: string;
      try {
        const u = new URL(q.url);
        if (`${u.protocol}//${u.host}` !== base) throw notFound();
        path = u.pathname;
      } catch {
        throw notFound();
      }
      const m = /^\/(?:@([^/]+)|users\/([^/]+)\/statuses)\/(\d{1,19})\/?$/.exec(path);
      if (!m) throw notFound();
      const owner = await findLocalAccountByUsername(core, m[1] ?? m[2]);
      const id = parseId(m[3]);
      if (!owner || owner.pendingUser || owner.suspendedAt || id === null) throw notFound();
      const status = await findVisibleStatus(core, null, id);
      if (!status || status.accountId !== owner._id || status.reblogOfId !== null) throw notFound();
      const width = Math.min(Number.parseInt(q.maxwidth ?? '', 10) || DEFAULT_WIDTH, 4000);
      const height = Number.parseInt(q.maxheight ?? '', 10) > 0 ? Number.parseInt(q.maxheight ?? '', 10) : null;
      const embed = `${base}/@${owner.username}/${status._id}/embed`;
      reply.header('cache-control', 'public, max-age=86400');
      return {
        type: 'rich',
        version: '1.0',
        author_name: owner.displayName || owner.username,
        author_url: `${base}/@${owner.username}`,
        provider_name: core.config.localDomain,
        provider_url: `${base}/`,
        cache_age: 86400,
        html: `<iframe src="${escapeHtml(embed)}" class="mastodon-embed" style="max-width: 100%; border: 0" width="${width}" allowfullscreen="allowfullscreen"></iframe>`,
        width,
        height,
      };
    },
  );
};

export default oembedArea;
