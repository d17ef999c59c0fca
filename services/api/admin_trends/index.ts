// Admin trends area: what is trending with its review state, and approving or rejecting hashtags,
// statuses and links (/api/v1/admin/trends/{tags,statuses,links}[/:id/approve|reject]); every
// route needs the manage_taxonomies permission, as Mastodon's policies.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId } from '../../core/ids.ts';
import { rankedForReview, rankedPublishers, type PublisherReview, type RankedItem } from '../../core/trends/queries.ts';
import { reviewsOf, reviewTrend } from '../../core/trends/review.ts';
import { findPublisher, trendMember } from '../../core/trends/members.ts';
import { requirePermission, type UserAuth } from '../plugins/auth.ts';
import { moderator } from '../admin/guard.ts';
import type { TrendKind } from '../../core/model/trends.ts';
import type { FastifyRequest } from 'fastify';
import { TagEntity } from '../../core/entities/tag.ts';
import { StatusEntity } from '../../core/entities/status.ts';
import { presentStatuses } from '../../core/entities/statusRender.ts';
import { TrendsLinkEntity } from '../../core/entities/previewCard.ts';
import { presentTrendingLinks, presentTrendingTags, statusesOf, tagsOf } from '../trends/present.ts';
import { OffsetPageQuery, offsetPageHandler, type OffsetPage } from '../trends/offsetPage.ts';
import { notFound } from '../errors.ts';
import { IdParams } from '../params.ts';

const READ = { scopes: ['admin:read'], user: 'required' as const, staff: true };
const WRITE = { scopes: ['admin:write'], user: 'required' as const, staff: true };

/** Admin::Tag: the Tag entity plus its review flags. */
const AdminTagEntity = Type.Composite([
  TagEntity,
  Type.Object({
    trendable: Type.Boolean(),
    usable: Type.Boolean(),
    requires_review: Type.Boolean(),
    listable: Type.Boolean(),
  }),
]);
type AdminTag = Static<typeof AdminTagEntity>;

async function presentAdminTags(core: Core, items: readonly RankedItem[]): Promise<AdminTag[]> {
  const rendered = await presentTrendingTags(core, items);
  const docs = await tagsOf(core, items);
  const reviews = await reviewsOf(
    core,
    'tag',
    docs.map((d) => d.nameNormalized),
  );
  return rendered.map((t, i) => {
    const r = reviews.get((docs[i] as { nameNormalized: string }).nameNormalized);
    return {
      ...t,
      trendable: r?.state === 'approved',
      usable: true,
      requires_review: r !== undefined && r.state === null && r.requestedReviewAt !== null,
      listable: r?.state !== 'rejected',
    };
  });
}

/** Mastodon's Admin::Trends::Links::PreviewCardProvider. */
const PublisherEntity = Type.Object({
  id: Type.String(),
  domain: Type.String(),
  trendable: Type.Boolean(),
  reviewed_at: Type.Union([Type.String(), Type.Null()]),
  requested_review_at: Type.Union([Type.String(), Type.Null()]),
  requires_review: Type.Boolean(),
});

function presentPublisher(p: PublisherReview): Static<typeof PublisherEntity> {
  return {
    id: String(p.id),
    domain: p.domain,
    trendable: p.state === 'approved',
    reviewed_at: p.reviewedAt ? p.reviewedAt.toISOString() : null,
    requested_review_at: p.requestedReviewAt ? p.requestedReviewAt.toISOString() : null,
    requires_review: p.state === null && p.requestedReviewAt !== null,
  };
}

const adminTrendsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  // What a reviewer is shown of each kind: the ranking with the items' review state.
  const ranked = (kind: TrendKind) => async (request: FastifyRequest, page: OffsetPage) => {
    await requirePermission(request, 'manage_taxonomies');
    return rankedForReview(core, kind, page);
  };
  const config = { auth: READ };

  app.get(
    '/api/v1/admin/trends/tags',
    { schema: { querystring: OffsetPageQuery, response: { 200: Type.Array(AdminTagEntity) } }, config },
    offsetPageHandler(core, [10, 20], ranked('tag'), (found) => presentAdminTags(core, found)),
  );
  app.get(
    '/api/v1/admin/trends/statuses',
    { schema: { querystring: OffsetPageQuery, response: { 200: Type.Array(StatusEntity) } }, config },
    offsetPageHandler(core, [20, 40], ranked('status'), async (found, request) =>
      presentStatuses(core, await statusesOf(core, found), moderator(request).account),
    ),
  );
  app.get(
    '/api/v1/admin/trends/links',
    { schema: { querystring: OffsetPageQuery, response: { 200: Type.Array(TrendsLinkEntity) } }, config },
    offsetPageHandler(core, [10, 20], ranked('link'), (found) => presentTrendingLinks(core, found)),
  );

  app.get(
    '/api/v1/admin/trends/links/publishers',
    { schema: { querystring: OffsetPageQuery, response: { 200: Type.Array(PublisherEntity) } }, config },
    offsetPageHandler(
      core,
      [10, 20],
      async (request, page) => {
        await requirePermission(request, 'manage_taxonomies');
        return rankedPublishers(core, page);
      },
      (found) => found.map(presentPublisher),
    ),
  );

  type Review = 'approved' | 'rejected';
  type IdRequest = FastifyRequest<{ Params: { id: string } }>;

  /** The handler reviewing a publisher (`state`), answering it with its review. */
  const reviewPublisher = (state: Review) => async (request: IdRequest) => {
    const { account } = await requirePermission(request, 'manage_taxonomies');
    const id = parseId(request.params.id);
    const provider = id === null ? null : await findPublisher(core, id);
    if (!provider) throw notFound();
    await reviewTrend(core, 'publisher', provider.domain, state, account._id);
    const review = (await reviewsOf(core, 'publisher', [provider.domain])).get(provider.domain);
    return presentPublisher({
      id: provider._id,
      domain: provider.domain,
      state: review?.state ?? null,
      reviewedAt: review?.reviewedAt ?? null,
      requestedReviewAt: review?.requestedReviewAt ?? null,
    });
  };
  const publisher = { schema: { params: IdParams, response: { 200: PublisherEntity } }, config: { auth: WRITE } };
  app.post('/api/v1/admin/trends/links/publishers/:id/approve', publisher, reviewPublisher('approved'));
  app.post('/api/v1/admin/trends/links/publishers/:id/reject', publisher, reviewPublisher('rejected'));

  /** The handler reviewing a trending item of `kind` (`state`), answering it as `present` renders it. */
  const reviewItem =
    <R>(kind: TrendKind, state: Review, present: (item: RankedItem, viewer: UserAuth['account']) => Promise<R>) =>
    async (request: IdRequest): Promise<R> => {
      const { account } = await requirePermission(request, 'manage_taxonomies');
      const item = await trendMember(core, kind, request.params.id);
      await reviewTrend(core, kind, item, state, account._id);
      return present({ item, score: 0, language: null }, account);
    };
  const one = <T>([out]: T[]): T => {
    if (!out) throw notFound();
    return out;
  };
  const presentTag = async (item: RankedItem) => one(await presentAdminTags(core, [item]));
  const presentStatus = async (item: RankedItem, viewer: UserAuth['account']) =>
    one(await presentStatuses(core, await statusesOf(core, [item]), viewer));
  const presentLink = async (item: RankedItem) => one(await presentTrendingLinks(core, [item]));

  const tag = { schema: { params: IdParams, response: { 200: AdminTagEntity } }, config: { auth: WRITE } };
  app.post('/api/v1/admin/trends/tags/:id/approve', tag, reviewItem('tag', 'approved', presentTag));
  app.post('/api/v1/admin/trends/tags/:id/reject', tag, reviewItem('tag', 'rejected', presentTag));
  const status = { schema: { params: IdParams, response: { 200: StatusEntity } }, config: { auth: WRITE } };
  app.post('/api/v1/admin/trends/statuses/:id/approve', status, reviewItem('status', 'approved', presentStatus));
  app.post('/api/v1/admin/trends/statuses/:id/reject', status, reviewItem('status', 'rejected', presentStatus));
  const link = { schema: { params: IdParams, response: { 200: TrendsLinkEntity } }, config: { auth: WRITE } };
  app.post('/api/v1/admin/trends/links/:id/approve', link, reviewItem('link', 'approved', presentLink));
  app.post('/api/v1/admin/trends/links/:id/reject', link, reviewItem('link', 'rejected', presentLink));
};

export default adminTrendsArea;
