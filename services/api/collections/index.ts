// Collections area (Mastodon 4.6): create, read, update and delete a collection of featured
// accounts; add and remove its accounts; a featured account revokes its place; an account's
// collections and the collections it is featured in (offset pagination, Link headers).
// Scopes: read:collections to read (public reads allowed), write:collections to change.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId } from '../../core/ids.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import type { FeaturedCollectionDoc } from '../../core/model/featuredCollections.ts';
import {
  addCollectionItem,
  collectionsFeaturing,
  collectionsOf,
  createCollection,
  deleteCollection,
  findCollection,
  ownCollection,
  removeCollectionItem,
  revokeCollectionItem,
  updateCollection,
  type CollectionInput,
} from '../../core/featuredCollections/collections.ts';
import {
  CollectionEntity,
  CollectionItemEntity,
  presentCollectionItem,
  presentCollections,
  presentCollectionWithAccounts,
} from '../../core/entities/collection.ts';
import { AccountEntity, presentAccounts, presentPartialAccount } from '../../core/entities/account.ts';
import { findVisibleAccounts } from '../../core/accounts/queries.ts';
import { requireUser } from '../plugins/auth.ts';
import { BoolLike, IdParams } from '../params.ts';
import { AccountIdParams, targetAccount } from '../graphParams.ts';
import { READ_COLLECTIONS_PUBLIC as READ, WRITE_COLLECTIONS as WRITE } from '../scopes.ts';

const Text = Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()]);
const CollectionBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 10_000 })),
    description: Type.Optional(Text),
    language: Type.Optional(Text),
    tag_name: Type.Optional(Text),
    sensitive: Type.Optional(BoolLike),
    discoverable: Type.Optional(BoolLike),
    account_ids: Type.Optional(
      Type.Union([Type.Array(Type.String({ maxLength: 30 }), { maxItems: 100 }), Type.String({ maxLength: 30 })]),
    ),
  },
  { additionalProperties: true },
);
type CollectionBody = Static<typeof CollectionBody>;

const ItemParams = Type.Object({ id: Type.String({ maxLength: 30 }), item_id: Type.String({ maxLength: 30 }) });
const PageQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 0 })), offset: Type.Optional(Type.Integer({ minimum: 0 })) },
  { additionalProperties: true },
);

const Wrapped = Type.Object({ collection: CollectionEntity });
const WithAccounts = Type.Object({ collection: CollectionEntity, accounts: Type.Array(AccountEntity) });
const PartialAccount = Type.Object({}, { additionalProperties: true });
const CollectionsList = Type.Object({
  collections: Type.Array(CollectionEntity),
  partial_accounts: Type.Array(PartialAccount),
});

function inputOf(body: CollectionBody | undefined): CollectionInput {
  const b = body ?? {};
  return {
    name: b.name,
    description: b.description,
    language: b.language,
    tagName: b.tag_name,
    sensitive: railsBoolean(b.sensitive),
    discoverable: railsBoolean(b.discoverable),
  };
}

async function wrapped(core: Core, doc: FeaturedCollectionDoc, viewer: AccountDoc) {
  const { collections } = await presentCollections(core, [doc], viewer);
  return { collection: collections[0] };
}

/** Mastodon's Collections listing: the collections and partial accounts of their curators and first items. */
async function listing(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  query: Static<typeof PageQuery>,
  read: (offset: number, limit: number) => Promise<FeaturedCollectionDoc[]>,
) {
  const limit = Math.min(query.limit || 40, 80);
  const offset = query.offset ?? 0;
  const docs = await read(offset, limit);
  if (docs.length === limit) {
    const next = new URL(request.url, core.config.baseUrl);
    next.searchParams.set('offset', String(offset + limit));
    next.searchParams.set('limit', String(limit));
    reply.header('link', `<${core.config.baseUrl}${next.pathname}${next.search}>; rel="next"`);
  }
  const viewer = request.auth?.account ?? null;
  const { collections } = await presentCollections(core, docs, viewer);
  // The curators and at most four accounts of each collection, without repeats.
  const ids = [...new Set(collections.flatMap((c) => [c.account_id, ...c.items.slice(0, 4).map((i) => i.account_id)]))]
    .filter((id): id is string => id !== null)
    .map((id) => BigInt(id));
  const accounts = await presentAccounts(core, await findVisibleAccounts(core, ids), { viewerId: viewer?._id });
  return { collections, partial_accounts: accounts.map(presentPartialAccount) };
}

const collectionsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/collections',
    { schema: { body: CollectionBody, response: { 200: Wrapped } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const raw = request.body?.account_ids;
      const accountIds = (raw === undefined ? [] : [raw].flat()).map((v) => parseId(v)).filter((v) => v !== null);
      const doc = await createCollection(core, account, { ...inputOf(request.body), accountIds });
      return wrapped(core, doc, account);
    },
  );

  app.get(
    '/api/v1/collections/:id',
    { schema: { params: IdParams, response: { 200: WithAccounts } }, config: { auth: READ } },
    async (request) => {
      const doc = await findCollection(core, parseId(request.params.id));
      return presentCollectionWithAccounts(core, doc, request.auth?.account ?? null);
    },
  );

  // Rails resources: PUT and PATCH both update (client libraries send PUT).
  const update = {
    schema: { params: IdParams, body: CollectionBody, response: { 200: Wrapped } },
    config: { auth: WRITE },
    handler: async (request: FastifyRequest<{ Params: Static<typeof IdParams>; Body: CollectionBody }>) => {
      const { account } = requireUser(request);
      const doc = await ownCollection(core, account, parseId(request.params.id));
      return wrapped(core, await updateCollection(core, doc, inputOf(request.body)), account);
    },
  };
  app.patch('/api/v1/collections/:id', update);
  app.put('/api/v1/collections/:id', update);

  app.delete(
    '/api/v1/collections/:id',
    { schema: { params: IdParams, response: { 200: Type.Object({}) } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      await deleteCollection(core, await ownCollection(core, account, parseId(request.params.id)));
      return {};
    },
  );

  app.post(
    '/api/v1/collections/:id/items',
    {
      schema: {
        params: IdParams,
        body: Type.Optional(
          Type.Object({ account_id: Type.Optional(Type.String({ maxLength: 30 })) }, { additionalProperties: true }),
        ),
        response: { 200: Type.Object({ collection_item: CollectionItemEntity }) },
      },
      config: { auth: WRITE },
    },
    async (request) => {
      const { account } = requireUser(request);
      const doc = await ownCollection(core, account, parseId(request.params.id));
      const raw = request.body?.account_id;
      const item = await addCollectionItem(core, account, doc, raw ? parseId(raw) : null);
      return { collection_item: presentCollectionItem(item) };
    },
  );

  app.delete(
    '/api/v1/collections/:id/items/:item_id',
    { schema: { params: ItemParams, response: { 200: Type.Object({}) } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const doc = await ownCollection(core, account, parseId(request.params.id));
      await removeCollectionItem(core, doc, parseId(request.params.item_id));
      return {};
    },
  );

  app.post(
    '/api/v1/collections/:id/items/:item_id/revoke',
    { schema: { params: ItemParams, response: { 200: Type.Object({}) } }, config: { auth: WRITE } },
    async (request) => {
      const { account } = requireUser(request);
      const doc = await findCollection(core, parseId(request.params.id));
      await revokeCollectionItem(core, account, doc, parseId(request.params.item_id));
      return {};
    },
  );

  app.get(
    '/api/v1/accounts/:id/collections',
    {
      schema: { params: AccountIdParams, querystring: PageQuery, response: { 200: CollectionsList } },
      config: { auth: READ },
    },
    async (request, reply) => {
      const owner = await targetAccount(core, request.params.id);
      const viewer = request.auth?.account ?? null;
      return listing(core, request, reply, request.query, (offset, limit) =>
        collectionsOf(core, { accountId: owner._id, viewer, offset, limit }),
      );
    },
  );

  app.get(
    '/api/v1/accounts/:id/in_collections',
    {
      schema: { params: AccountIdParams, querystring: PageQuery, response: { 200: CollectionsList } },
      config: { auth: READ },
    },
    async (request, reply) => {
      const featured = await targetAccount(core, request.params.id);
      const viewer = request.auth?.account ?? null;
      return listing(core, request, reply, request.query, (offset, limit) =>
        collectionsFeaturing(core, { accountId: featured._id, viewer, offset, limit }),
      );
    },
  );
};

export default collectionsArea;
