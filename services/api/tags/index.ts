// Tags area: a hashtag (`:id` is its name, percent-encoded non-ASCII accepted), following and
// unfollowing it, and the caller's followed hashtags (paginated with Link headers).
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { collection } from '../../core/db/mongo.ts';
import { tags, type TagDoc } from '../../core/model/tags.ts';
import { tagFollows } from '../../core/model/tagFollows.ts';
import { normalizeTagName, MAX_HASHTAG_LENGTH } from '../../core/text/extract.ts';
import { findOrCreateTag } from '../../core/statuses/entities.ts';
import { followTag, followsTag, unfollowTag } from '../../core/tags/tagFollows.ts';
import { requireUser } from '../plugins/auth.ts';
import { TagEntity, type Tag } from '../../core/entities/tag.ts';
import { presentTagsWithHistory } from '../../core/entities/tagHistory.ts';
import { findPage, setLinkHeader } from '../pagination.ts';
import { notFound } from '../errors.ts';
import { AccountPageQuery, accountPage } from '../graphParams.ts';

const TagParams = Type.Object({ id: Type.String({ maxLength: 1000 }) });
const WRITE = { scopes: ['write', 'write:follows', 'follow'], user: 'required' as const };

/** A valid hashtag name from the path (Fastify has already percent-decoded it). */
function tagName(raw: string): string {
  const name = raw.trim().replace(/^#/, '');
  if (
    !name ||
    [...name].length > MAX_HASHTAG_LENGTH ||
    !/^[\p{L}\p{M}\p{N}_·\u200c]+$/u.test(name) ||
    /^\d+$/.test(name)
  )
    throw notFound();
  return name;
}

async function findTag(core: Core, raw: string): Promise<TagDoc | null> {
  return collection(core.db, tags).findOne({ nameNormalized: normalizeTagName(tagName(raw)) });
}

const tagsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/tags/:id',
    {
      schema: { params: TagParams, response: { 200: TagEntity } },
      config: { auth: { scopes: ['read'], user: 'optional' } },
    },
    async (request) => {
      const tag = await findTag(core, request.params.id);
      if (!tag) throw notFound();
      const viewer = request.auth?.account ?? null;
      const flags = viewer ? { following: await followsTag(core, viewer, tag), featuring: false } : undefined;
      const [out] = await presentTagsWithHistory(core, [tag], () => flags);
      return out as Tag;
    },
  );

  for (const [action, operation, following] of [
    ['follow', followTag, true],
    ['unfollow', unfollowTag, false],
  ] as const) {
    app.post(
      `/api/v1/tags/:id/${action}`,
      { schema: { params: TagParams, response: { 200: TagEntity } }, config: { auth: WRITE } },
      async (request) => {
        const { account } = requireUser(request);
        const tag = following
          ? await findOrCreateTag(core, tagName(request.params.id))
          : await findTag(core, request.params.id);
        if (!tag) throw notFound();
        await operation(core, account, tag);
        const [out] = await presentTagsWithHistory(core, [tag], () => ({ following, featuring: false }));
        return out as Tag;
      },
    );
  }

  app.get(
    '/api/v1/followed_tags',
    {
      schema: { querystring: AccountPageQuery, response: { 200: Type.Array(TagEntity) } },
      config: { auth: { scopes: ['read', 'read:follows', 'follow'], user: 'required' } },
    },
    async (request, reply) => {
      const { account } = requireUser(request);
      const page = accountPage(request.query);
      // Mastodon: 100 by default, 200 at most.
      if (request.query.limit === undefined) page.limit = 100;
      page.limit = Math.min(page.limit, 200);
      const records = await findPage(collection(core.db, tagFollows), { accountId: account._id }, page);
      setLinkHeader(core, request, reply, {
        oldest: records.at(-1)?._id ?? null,
        newest: records[0]?._id ?? null,
        count: records.length,
        limit: page.limit,
        prevParam: 'since_id',
      });
      const byId = new Map(
        (
          await collection(core.db, tags)
            .find({ _id: { $in: records.map((r) => r.tagId) } })
            .toArray()
        ).map((t) => [t._id, t]),
      );
      const list = records.map((r) => byId.get(r.tagId)).filter((t) => t !== undefined);
      return presentTagsWithHistory(core, list, () => ({ following: true, featuring: false }));
    },
  );
};

export default tagsArea;
