// Tags area: a hashtag (`:id` is its name, percent-encoded non-ASCII accepted; a valid name nobody
// used answers the unsaved tag, id "", as Mastodon, so a client can follow it), following and
// unfollowing it, featuring it on one's profile (Mastodon 4.4), and the caller's followed hashtags
// (paginated with Link headers).
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import type { TagDoc } from '../../core/model/tags.ts';
import { MAX_HASHTAG_LENGTH } from '../../core/text/extract.ts';
import { findOrCreateTag } from '../../core/statuses/entities.ts';
import { findTagByName, followedTagsPage, followTag, followsTag, unfollowTag } from '../../core/tags/tagFollows.ts';
import { featuredAmong, featureTag, featuresTag, unfeatureTagNamed } from '../../core/tags/featuredTags.ts';
import type { CachedAccount } from '../../core/model/accounts.ts';
import { tagUrl } from '../../core/statuses/urls.ts';
import { requireUser } from '../plugins/auth.ts';
import { TagEntity, type Tag } from '../../core/entities/tag.ts';
import { presentTagsWithHistory } from '../../core/entities/tagHistory.ts';
import { setRecordPageLinks } from '../pagination.ts';
import { notFound } from '../errors.ts';
import { AccountPageQuery, accountPage } from '../graphParams.ts';
import { WRITE_FOLLOWS as WRITE, WRITE_ACCOUNTS as FEATURE } from '../scopes.ts';

const TagParams = Type.Object({ id: Type.String({ maxLength: 1000 }) });

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
  return findTagByName(core, tagName(raw));
}

/** The caller's `following` and `featuring` of a tag (absent for an anonymous caller). */
async function viewerFlags(core: Core, viewer: CachedAccount | null, tag: TagDoc) {
  if (!viewer) return undefined;
  const [following, featuring] = await Promise.all([followsTag(core, viewer, tag), featuresTag(core, viewer._id, tag)]);
  return { following, featuring };
}

/** One tag with its history and the caller's flags. */
async function presentTag(core: Core, tag: TagDoc, flags?: { following: boolean; featuring: boolean }): Promise<Tag> {
  const [out] = await presentTagsWithHistory(core, [tag], () => flags);
  return out as Tag;
}

/** A valid name nobody has used: Mastodon renders an unsaved Tag (empty id, no history). */
function unsavedTag(core: Core, name: string, viewer: CachedAccount | null): Tag {
  const tag: Tag = { id: '', name, url: tagUrl(core.config, name), history: [] };
  return viewer ? { ...tag, following: false, featuring: false } : tag;
}

const tagsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/tags/:id',
    {
      schema: { params: TagParams, response: { 200: TagEntity } },
      config: { auth: { scopes: ['read'], user: 'optional' } },
    },
    async (request) => {
      const viewer = request.auth?.account ?? null;
      const tag = await findTag(core, request.params.id);
      if (!tag) return unsavedTag(core, tagName(request.params.id), viewer);
      return presentTag(core, tag, await viewerFlags(core, viewer, tag));
    },
  );

  /** Follows (creating a tag never used) or unfollows the tag named by `:id`, answering it. */
  const followHandler = (following: boolean) => async (request: FastifyRequest<{ Params: { id: string } }>) => {
    const { account } = requireUser(request);
    const tag = following
      ? await findOrCreateTag(core, tagName(request.params.id))
      : await findTag(core, request.params.id);
    if (!tag) throw notFound();
    await (following ? followTag : unfollowTag)(core, account, tag);
    return presentTag(core, tag, { following, featuring: await featuresTag(core, account._id, tag) });
  };
  const follow = { schema: { params: TagParams, response: { 200: TagEntity } }, config: { auth: WRITE } };
  app.post('/api/v1/tags/:id/follow', follow, followHandler(true));
  app.post('/api/v1/tags/:id/unfollow', follow, followHandler(false));

  app.post(
    '/api/v1/tags/:id/feature',
    { schema: { params: TagParams, response: { 200: TagEntity } }, config: { auth: FEATURE } },
    async (request) => {
      const { account } = requireUser(request);
      const name = tagName(request.params.id);
      await featureTag(core, account, name);
      const tag = await findTag(core, name);
      if (!tag) throw notFound();
      return presentTag(core, tag, { following: await followsTag(core, account, tag), featuring: true });
    },
  );

  app.post(
    '/api/v1/tags/:id/unfeature',
    { schema: { params: TagParams, response: { 200: TagEntity } }, config: { auth: FEATURE } },
    async (request) => {
      const { account } = requireUser(request);
      const tag = await findTag(core, request.params.id);
      // Mastodon answers an unsaved tag when nobody used the name (nothing to unfeature).
      if (!tag) return unsavedTag(core, tagName(request.params.id), account);
      await unfeatureTagNamed(core, account, tag._id);
      return presentTag(core, tag, { following: await followsTag(core, account, tag), featuring: false });
    },
  );

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
      const { records, tags: list } = await followedTagsPage(core, account._id, page);
      setRecordPageLinks(core, request, reply, records, page.limit);
      const featured = await featuredAmong(
        core,
        account._id,
        list.map((t) => t._id),
      );
      return presentTagsWithHistory(core, list, (t) => ({ following: true, featuring: featured.has(t._id) }));
    },
  );
};

export default tagsArea;
