// Review of trending items, as Mastodon's: nothing trends before a moderator approved it, unless
// the `trendable_by_default` setting allows unreviewed items (rejected ones never trend). Items
// whose score passes the review threshold are queued for review; moderators with the
// manage_taxonomies permission get a review notice (e-mail through the mailer pipeline) at most
// once every two hours, naming what waits.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { settings } from '../model/settings.ts';
import { trendReviews, trendReviewId, type ReviewKind, type TrendKind, type TrendReviewDoc } from '../model/trends.ts';
import { previewCards } from '../model/previewCards.ts';
import { publisherDomain } from '../previews/cards.ts';
import { roles } from '../model/roles.ts';
import { users } from '../model/users.ts';
import { accounts } from '../model/accounts.ts';
import { hasPermission } from '../roles/permissions.ts';
import { mailRequestedEvent } from '../mail/request.ts';
import { wantsEmail } from '../users/notificationEmails.ts';

const AUTO_APPROVE = 'trendable_by_default';
/** The specification's review notice interval. */
export const REVIEW_NOTICE_INTERVAL_MS = 2 * 3_600_000;
const NOTICE_LOCK = 'trends:review-notice';

export async function autoApprove(core: Core): Promise<boolean> {
  const doc = await collection(core.db, settings).findOne({ _id: AUTO_APPROVE });
  return doc?.value === true;
}

export async function setAutoApprove(core: Core, value: boolean): Promise<void> {
  await collection(core.db, settings).updateOne(
    { _id: AUTO_APPROVE },
    { $set: { value, updatedAt: new Date() } },
    { upsert: true },
  );
}

export async function reviewsOf(
  core: Core,
  kind: ReviewKind,
  items: readonly string[],
): Promise<Map<string, TrendReviewDoc>> {
  if (items.length === 0) return new Map();
  const docs = await collection(core.db, trendReviews)
    .find({ _id: { $in: items.map((i) => trendReviewId(kind, i)) } })
    .toArray();
  return new Map(docs.map((d) => [d.itemId, d]));
}

/** The items of `items` that an administrator approved. */
export async function reviewedAmong(core: Core, kind: ReviewKind, items: readonly string[]): Promise<Set<string>> {
  const reviews = await reviewsOf(core, kind, items);
  return new Set(items.filter((i) => reviews.get(i)?.state === 'approved'));
}

/**
 * The items allowed to trend: approved, or not rejected when unreviewed items may trend. An
 * unreviewed link follows its publisher's review (Mastodon's PreviewCard#trendable?).
 */
export async function allowedAmong(core: Core, kind: TrendKind, items: readonly string[]): Promise<Set<string>> {
  const [reviews, auto] = await Promise.all([reviewsOf(core, kind, items), autoApprove(core)]);
  const publisherOf = new Map<string, string>();
  let publisherStates = new Map<string, TrendReviewDoc>();
  if (kind === 'link') {
    const unreviewed = items.filter((i) => (reviews.get(i)?.state ?? null) === null);
    if (unreviewed.length > 0) {
      const cards = await collection(core.db, previewCards)
        .find({ _id: { $in: unreviewed.map((i) => BigInt(i)) } }, { projection: { url: 1 } })
        .toArray();
      for (const c of cards) publisherOf.set(String(c._id), publisherDomain(c.url));
      publisherStates = await reviewsOf(core, 'publisher', [...new Set(publisherOf.values())]);
    }
  }
  return new Set(
    items.filter((i) => {
      let state = reviews.get(i)?.state ?? null;
      if (state === null && kind === 'link') state = publisherStates.get(publisherOf.get(i) ?? '')?.state ?? null;
      return state === 'approved' || (auto && state === null);
    }),
  );
}

/** Records an approval or rejection (again approving a rejected item is allowed, as in Mastodon). */
export async function reviewTrend(
  core: Core,
  kind: ReviewKind,
  item: string,
  decision: 'approved' | 'rejected',
  reviewerAccountId: bigint | null,
): Promise<void> {
  await collection(core.db, trendReviews).updateOne(
    { _id: trendReviewId(kind, item) },
    {
      $set: {
        state: decision,
        reviewedAt: new Date(),
        reviewedByAccountId: reviewerAccountId === null ? null : String(reviewerAccountId),
      },
      $setOnInsert: { kind, itemId: item, requestedReviewAt: null, noticeSent: true },
    },
    { upsert: true },
  );
}

/** Queues unreviewed items for review (once each). */
export async function requestReviews(core: Core, kind: TrendKind, items: readonly string[], at: Date): Promise<void> {
  if (items.length === 0) return;
  const coll = collection(core.db, trendReviews);
  await coll.bulkWrite(
    items.map((item) => ({
      updateOne: {
        filter: { _id: trendReviewId(kind, item) },
        update: {
          $setOnInsert: {
            kind,
            itemId: item,
            state: null,
            reviewedAt: null,
            reviewedByAccountId: null,
            requestedReviewAt: at,
            noticeSent: false,
          },
        },
        upsert: true,
      },
    })),
    { ordered: false },
  );
}

export interface Reviewer {
  email: string;
  username: string;
  accountId: bigint;
}

/** Local users whose role grants manage_taxonomies (and who can log in). */
export async function trendReviewers(core: Core): Promise<Reviewer[]> {
  const allRoles = await collection(core.db, roles).find({}).toArray();
  const roleIds = allRoles.filter((r) => hasPermission(r.permissions, 'manage_taxonomies')).map((r) => r._id);
  if (roleIds.length === 0) return [];
  const found = await collection(core.db, users)
    .find({ roleId: { $in: roleIds }, disabled: false, confirmedAt: { $ne: null } })
    .toArray();
  const accountDocs = await collection(core.db, accounts)
    .find({ _id: { $in: found.map((u) => u.accountId) }, suspendedAt: null }, { projection: { username: 1 } })
    .toArray();
  const names = new Map(accountDocs.map((a) => [a._id, a.username]));
  // Those who turned "New trend requires review" off on their notification page get none.
  return found
    .filter((u) => names.has(u.accountId) && wantsEmail(u, 'trends'))
    .map((u) => ({ email: u.email, username: names.get(u.accountId) as string, accountId: u.accountId }));
}

/**
 * Sends one review notice per reviewer listing what waits, unless one went out within the last
 * two hours (a Redis lock shared by every process). Returns how many notices were sent.
 */
export async function sendReviewNotices(core: Core, now = new Date()): Promise<number> {
  const coll = collection(core.db, trendReviews);
  const waiting = await coll
    .find({ noticeSent: false, requestedReviewAt: { $ne: null } })
    .limit(100)
    .toArray();
  const pending = waiting.filter((d) => d.state === null);
  if (pending.length === 0) return 0;
  const locked = await core.redis.set(NOTICE_LOCK, String(now.getTime()), 'PX', REVIEW_NOTICE_INTERVAL_MS, 'NX');
  if (locked !== 'OK') return 0;
  const reviewers = await trendReviewers(core);
  const ids = waiting.map((d) => d._id);
  const items = pending.map((d) => `- ${d.kind} ${d.itemId}`).join('\n');
  const link = `${core.config.baseUrl}/admin/trends`;
  const events = reviewers.map((r) =>
    mailRequestedEvent(
      {
        to: r.email,
        template: 'trends_review',
        key: String(r.accountId),
        variables: { instance: core.config.localDomain, username: r.username, items, link },
      },
      { collection: 'trend_reviews', filter: { _id: ids[0], noticeSent: true }, expect: 'exists' },
    ),
  );
  await core.outbox.write(events, async () => {
    await coll.updateMany({ _id: { $in: ids } }, { $set: { noticeSent: true } });
  });
  return reviewers.length;
}
