// Notification entity (mastodon-api-entities.md §15) and the grouped results of /api/v2 (§15.1),
// rendered in batches. Notifications whose status was deleted or whose account is gone are left
// out, as Mastodon does.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type CachedAccount } from '../model/accounts.ts';
import { statuses } from '../model/statuses.ts';
import type { NotificationDoc } from '../model/notifications.ts';
import { AccountEntity, presentAccounts, type Account } from './account.ts';
import { StatusEntity, type Status } from './status.ts';
import { presentStatuses } from './statusRender.ts';
import { notificationExtras } from './notificationExtras.ts';

export const NotificationEntity = Type.Object({
  id: Type.String(),
  type: Type.String(),
  group_key: Type.String(),
  created_at: Type.String(),
  account: AccountEntity,
  status: Type.Optional(StatusEntity),
  report: Type.Optional(Type.Unknown()),
  moderation_warning: Type.Optional(Type.Unknown()),
  collection: Type.Optional(Type.Unknown()),
});
export type Notification = Static<typeof NotificationEntity>;

export interface RenderedRefs {
  accounts: Map<bigint, Account>;
  statuses: Map<bigint, Status>;
}

/** Accounts and statuses the notifications refer to, rendered for `viewer`. */
export async function renderRefs(
  core: Core,
  accountIds: Id[],
  statusIds: Id[],
  viewer: CachedAccount,
): Promise<RenderedRefs> {
  const [accountDocs, statusDocs] = await Promise.all([
    accountIds.length
      ? collection(core.db, accounts)
          .find({ _id: { $in: [...new Set(accountIds)] } })
          .toArray()
      : Promise.resolve([]),
    statusIds.length
      ? collection(core.db, statuses)
          .find({ _id: { $in: [...new Set(statusIds)] }, deletedAt: null })
          .toArray()
      : Promise.resolve([]),
  ]);
  // Suspended accounts vanish from notifications (and their groups) until they are unsuspended.
  const shownAccounts = accountDocs.filter((a) => !a.suspendedAt);
  const [renderedAccounts, renderedStatuses] = await Promise.all([
    presentAccounts(core, shownAccounts, { viewerId: viewer._id }),
    presentStatuses(core, statusDocs, viewer),
  ]);
  return {
    accounts: new Map(shownAccounts.map((a, i) => [a._id, renderedAccounts[i]])),
    statuses: new Map(statusDocs.map((s, i) => [s._id, renderedStatuses[i]])),
  };
}

/** True when the notification can be shown (its account and status still exist). */
export function presentable(n: NotificationDoc, refs: RenderedRefs): boolean {
  return refs.accounts.has(n.fromAccountId) && (n.statusId === null || refs.statuses.has(n.statusId));
}

export async function presentNotifications(
  core: Core,
  docs: NotificationDoc[],
  viewer: CachedAccount,
): Promise<Notification[]> {
  if (docs.length === 0) return [];
  const refs = await renderRefs(
    core,
    docs.map((n) => n.fromAccountId),
    docs.map((n) => n.statusId).filter((s): s is Id => s !== null),
    viewer,
  );
  const extras = await notificationExtras(core, docs, viewer);
  return (
    docs
      .filter((n) => presentable(n, refs))
      // admin.report, moderation_warning and the collection types need their record (gone: the
      // notification goes too).
      .filter((n) => extras.has(n._id))
      .map((n) => {
        const out: Notification = {
          id: String(n._id),
          type: n.type,
          group_key: n.groupKey,
          created_at: n.createdAt.toISOString(),
          account: refs.accounts.get(n.fromAccountId) as Account,
        };
        if (n.statusId !== null) out.status = refs.statuses.get(n.statusId);
        Object.assign(out, extras.get(n._id));
        return out;
      })
  );
}
