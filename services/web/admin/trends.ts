// Trends review (manage_taxonomies, Mastodon's /admin/trends/...): what ranks now with its review
// state, approved or rejected through the same core review as the admin API (hashtags, links,
// posts, and the publishers of links).
import type { FastifyRequest } from 'fastify';
import type { AdminArea } from './kit.ts';
import type { ReviewKind, TrendKind } from '../../core/model/trends.ts';
import { cardsById } from '../../core/previews/cards.ts';
import { rankedForReview, rankedPublishers } from '../../core/trends/queries.ts';
import { reviewTrend } from '../../core/trends/review.ts';
import { trendMember } from '../../core/trends/members.ts';
import { statusesOf, tagsOf } from '../../api/trends/present.ts';

const LISTED = { limit: 40, offset: 0 };
const KINDS: Record<string, ReviewKind> = {
  tags: 'tag',
  links: 'link',
  statuses: 'status',
  publishers: 'publisher',
};

interface Row {
  id: string;
  label: string;
  href: string | null;
  state: 'approved' | 'rejected' | null;
  pending: boolean;
}

const trendPages: AdminArea = (app, { core, asStaff, view, attempt }) => {
  async function rows(kind: ReviewKind): Promise<Row[]> {
    if (kind === 'publisher')
      return (await rankedPublishers(core, LISTED)).map((p) => ({
        id: String(p.id),
        label: p.domain,
        href: null,
        state: p.state,
        pending: p.state === null && p.requestedReviewAt !== null,
      }));
    const ranked = await rankedForReview(core, kind as TrendKind, LISTED);
    const state = new Map(ranked.map((r) => [r.item, r]));
    const row = (item: string, id: string, label: string, href: string | null): Row => ({
      id,
      label,
      href,
      state: state.get(item)?.state ?? null,
      pending: (state.get(item)?.requestedReview ?? false) && state.get(item)?.state === null,
    });
    if (kind === 'tag')
      return (await tagsOf(core, ranked)).map((t) =>
        row(t.nameNormalized, String(t._id), `#${t.name}`, `/tags/${encodeURIComponent(t.name)}`),
      );
    if (kind === 'status')
      return (await statusesOf(core, ranked)).map((s) =>
        row(String(s._id), String(s._id), (s.spoilerText || s.text).slice(0, 200), s.url ?? s.uri),
      );
    const cards = await cardsById(
      core,
      ranked.map((r) => BigInt(r.item)),
    );
    return [...cards.values()].map((c) => row(String(c._id), String(c._id), c.title || c.url, c.url));
  }

  const kindOf = (request: FastifyRequest) => KINDS[(request.params as { kind: string }).kind] ?? null;

  app.get<{ Params: { kind: string } }>(
    '/admin/trends/:kind',
    asStaff('manage_taxonomies', async (request, reply, me) => {
      const kind = kindOf(request);
      if (!kind) return reply.callNotFound();
      return view(reply, me, 'trends', 'admin.trends.title', {
        kind: request.params.kind,
        kinds: Object.keys(KINDS),
        rows: await rows(kind),
      });
    }),
  );

  app.post<{ Params: { kind: string; id: string; decision: string } }>(
    '/admin/trends/:kind/:id/:decision',
    { preHandler: app.csrfProtection },
    asStaff('manage_taxonomies', async (request, reply, me) => {
      const kind = kindOf(request);
      const decision = ({ approve: 'approved', reject: 'rejected' } as const)[request.params.decision as 'approve'];
      if (!kind || !decision) return reply.callNotFound();
      const error = await attempt(async () =>
        reviewTrend(core, kind, await trendMember(core, kind, request.params.id), decision, me.account._id),
      );
      if (error) return reply.callNotFound();
      return reply.redirect(`/admin/trends/${request.params.kind}`, 303);
    }),
  );
};

export default trendPages;
