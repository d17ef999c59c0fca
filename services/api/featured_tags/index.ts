// Featured tags: the caller's (list, feature by name, unfeature, suggestions from its own usage)
// and another account's (public).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId } from '../../core/ids.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import type { FeaturedTagDoc } from '../../core/model/featuredTags.ts';
import { tagsByNames } from '../../core/tags/byNames.ts';
import {
  featureTag,
  featuredTagSuggestions,
  featuredTagUsage,
  ownFeaturedTags,
  unfeatureTag,
} from '../../core/tags/featuredTags.ts';
import { requireUser } from '../plugins/auth.ts';
import { presentTag, TagEntity } from '../../core/entities/tag.ts';
import { missingParam } from '../errors.ts';
import { AccountIdParams, targetAccount } from '../graphParams.ts';
import { READ_ACCOUNTS as READ, WRITE_ACCOUNTS as WRITE } from '../scopes.ts';

const FeaturedTagEntity = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  statuses_count: Type.Integer(),
  last_status_at: Type.Union([Type.String(), Type.Null()]),
});

async function presentFeaturedTags(
  core: Core,
  owner: AccountDoc,
  docs: FeaturedTagDoc[],
): Promise<Static<typeof FeaturedTagEntity>[]> {
  return Promise.all(
    docs.map(async (d) => {
      const usage = await featuredTagUsage(core, owner._id, d.nameNormalized);
      return {
        id: String(d._id),
        name: d.name,
        url: `${owner.url}/tagged/${encodeURIComponent(d.nameNormalized)}`,
        statuses_count: usage.statusesCount,
        // Mastodon gives the day only.
        last_status_at: usage.lastStatusAt ? usage.lastStatusAt.toISOString().slice(0, 10) : null,
      };
    }),
  );
}

const featuredTagsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const own = (account: AccountDoc) => ownFeaturedTags(core, account._id);

  app.get(
    '/api/v1/featured_tags',
    { schema: { response: { 200: Type.Array(FeaturedTagEntity) } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      return presentFeaturedTags(core, account, await own(account));
    },
  );

  app.post(
    '/api/v1/featured_tags',
    {
      schema: {
        body: Type.Optional(
          Type.Object({ name: Type.Optional(Type.String({ maxLength: 1000 })) }, { additionalProperties: true }),
        ),
        response: { 200: FeaturedTagEntity },
      },
      config: { auth: WRITE },
    },
    async (request) => {
      const { account } = requireUser(request);
      const name = request.body?.name?.trim();
      if (!name) throw missingParam('name');
      const [one] = await presentFeaturedTags(core, account, [await featureTag(core, account, name)]);
      return one as Static<typeof FeaturedTagEntity>;
    },
  );

  app.delete(
    '/api/v1/featured_tags/:id',
    { schema: { params: AccountIdParams, response: { 200: Type.Object({}) } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      await unfeatureTag(core, account, parseId(request.params.id));
      return {};
    },
  );

  app.get(
    '/api/v1/featured_tags/suggestions',
    { schema: { response: { 200: Type.Array(TagEntity) } }, config: { auth: READ } },
    async (request) => {
      const { account } = requireUser(request);
      const names = await featuredTagSuggestions(core, account);
      return (await tagsByNames(core, names)).map((t) => presentTag(core.config, t));
    },
  );

  app.get(
    '/api/v1/accounts/:id/featured_tags',
    {
      schema: { params: AccountIdParams, response: { 200: Type.Array(FeaturedTagEntity) } },
      config: { auth: { scopes: ['read', 'read:accounts'], user: 'optional' } },
    },
    async (request) => {
      const owner = await targetAccount(core, request.params.id);
      return presentFeaturedTags(core, owner, await own(owner));
    },
  );
};

export default featuredTagsArea;
