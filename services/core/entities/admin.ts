// Admin entities (mastodon-api-entities.md §36): Admin::Account (the account plus its login's
// moderation facts), Admin::Report, and the user-facing Report; rendered in batches.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { findInOrder } from '../db/findInOrder.ts';
import { accounts, type AccountDoc, type CachedAccount } from '../model/accounts.ts';
import { users, type UserDoc } from '../model/users.ts';
import { statuses } from '../model/statuses.ts';
import {
  accountWarnings,
  reports as reportsCollection,
  type AccountWarningDoc,
  type ReportDoc,
} from '../model/reports.ts';
import type { NotificationDoc } from '../model/notifications.ts';
import { roleOfUser } from '../roles/roles.ts';
import { findRules, renderRule } from '../moderation/rules.ts';
import { presentAccounts, presentRole, type Account } from './account.ts';
import { presentStatuses } from './statusRender.ts';

export async function presentAdminAccounts(core: Core, docs: AccountDoc[]): Promise<Record<string, unknown>[]> {
  if (docs.length === 0) return [];
  const local = docs.filter((d) => d.domain === null).map((d) => d._id);
  const userDocs = local.length
    ? await collection(core.db, users)
        .find({ accountId: { $in: local } })
        .toArray()
    : [];
  const userByAccount = new Map<bigint, UserDoc>(userDocs.map((u) => [u.accountId, u]));
  const rendered = await presentAccounts(core, docs);
  return Promise.all(
    docs.map(async (doc, i) => {
      const user = userByAccount.get(doc._id) ?? null;
      const out: Record<string, unknown> = {
        id: String(doc._id),
        username: doc.username,
        domain: doc.domain,
        created_at: doc.createdAt.toISOString(),
        email: user?.email ?? null,
        ip: user?.signUpIp ?? null,
        ips: user?.signUpIp ? [{ ip: user.signUpIp, used_at: user.createdAt.toISOString() }] : [],
        locale: user?.locale ?? null,
        invite_request: user?.signUpReason ?? null,
        role: user ? presentRole(await roleOfUser(core, user)) : null,
        confirmed: user ? user.confirmedAt !== null : true,
        approved: user ? user.approved : true,
        disabled: user ? user.disabled : false,
        sensitized: doc.sensitizedAt != null,
        silenced: doc.silencedAt !== null,
        suspended: doc.suspendedAt !== null,
        account: rendered[i],
      };
      if (user?.createdByAppId) out.created_by_application_id = String(user.createdByAppId);
      return out;
    }),
  );
}

export async function presentAdminAccount(core: Core, doc: AccountDoc): Promise<Record<string, unknown>> {
  return (await presentAdminAccounts(core, [doc]))[0];
}

async function accountsById(core: Core, ids: Id[]): Promise<Map<bigint, AccountDoc>> {
  const docs = await findInOrder(collection(core.db, accounts), [...new Set(ids)]);
  return new Map(docs.map((d) => [d._id, d]));
}

export async function presentAdminReports(
  core: Core,
  reports: ReportDoc[],
  viewer: CachedAccount,
): Promise<Record<string, unknown>[]> {
  if (reports.length === 0) return [];
  const ids = reports.flatMap((r) =>
    [r.accountId, r.targetAccountId, r.assignedAccountId, r.actionTakenByAccountId].filter((x): x is Id => x !== null),
  );
  const byId = await accountsById(core, ids);
  const docs = [...byId.values()];
  const rendered = await presentAdminAccounts(core, docs);
  const adminById = new Map(docs.map((d, i) => [d._id, rendered[i]]));
  const admin = (id: Id | null) => (id === null ? null : (adminById.get(id) ?? null));
  return Promise.all(
    reports.map(async (r) => {
      const statusDocs = await findInOrder(collection(core.db, statuses), r.statusIds);
      const rules = await findRules(core, r.ruleIds, { includeDeleted: true });
      return {
        ...reportFields(r),
        updated_at: r.updatedAt.toISOString(),
        account: admin(r.accountId),
        target_account: admin(r.targetAccountId),
        assigned_account: admin(r.assignedAccountId),
        action_taken_by_account: admin(r.actionTakenByAccountId),
        statuses: await presentStatuses(core, statusDocs, viewer),
        rules: rules.map(renderRule),
      };
    }),
  );
}

/** What the user-facing Report and Admin::Report both say of a report. */
function reportFields(report: ReportDoc): Record<string, unknown> {
  return {
    id: String(report._id),
    action_taken: report.actionTakenAt !== null,
    action_taken_at: report.actionTakenAt?.toISOString() ?? null,
    category: report.category,
    comment: report.comment,
    forwarded: report.forwarded,
    created_at: report.createdAt.toISOString(),
  };
}

/** The user-facing Report entity. */
export async function presentReport(
  core: Core,
  report: ReportDoc,
  target: AccountDoc,
): Promise<Record<string, unknown>> {
  const [targetAccount] = await presentAccounts(core, [target]);
  return {
    ...reportFields(report),
    status_ids: report.statusIds.length ? report.statusIds.map(String) : null,
    rule_ids: report.ruleIds.length ? report.ruleIds.map(String) : null,
    target_account: targetAccount as Account,
  };
}

/** AccountWarning (a strike), as the `moderation_warning` notification carries it. */
export function presentAccountWarning(warning: AccountWarningDoc, target: Account): Record<string, unknown> {
  return {
    id: String(warning._id),
    action: warning.action,
    text: warning.text,
    status_ids: warning.statusIds.length ? warning.statusIds.map(String) : null,
    target_account: target,
    appeal: null,
    created_at: warning.createdAt.toISOString(),
  };
}

/**
 * The `report` of `admin.report` and the `moderation_warning` of `moderation_warning`
 * notifications, by notification id; notifications whose record is gone are missing from it.
 */
export async function notificationModerationRefs(
  core: Core,
  docs: NotificationDoc[],
): Promise<Map<bigint, { report?: Record<string, unknown>; moderation_warning?: Record<string, unknown> }>> {
  const out = new Map<bigint, { report?: Record<string, unknown>; moderation_warning?: Record<string, unknown> }>();
  const reportIds = docs.map((d) => d.reportId).filter((x): x is Id => x != null);
  const warningIds = docs.map((d) => d.warningId).filter((x): x is Id => x != null);
  if (reportIds.length === 0 && warningIds.length === 0) return out;
  const [reportDocs, warningDocs] = await Promise.all([
    findInOrder(collection(core.db, reportsCollection), reportIds),
    findInOrder(collection(core.db, accountWarnings), warningIds),
  ]);
  const byId = await accountsById(core, [
    ...reportDocs.map((r) => r.targetAccountId),
    ...warningDocs.map((w) => w.targetAccountId),
  ]);
  const reportById = new Map<bigint, Record<string, unknown>>();
  for (const r of reportDocs) {
    const target = byId.get(r.targetAccountId);
    if (target) reportById.set(r._id, await presentReport(core, r, target));
  }
  const warningById = new Map<bigint, Record<string, unknown>>();
  for (const w of warningDocs) {
    const target = byId.get(w.targetAccountId);
    if (target) warningById.set(w._id, presentAccountWarning(w, (await presentAccounts(core, [target]))[0]));
  }
  for (const d of docs) {
    if (d.reportId != null && reportById.has(d.reportId)) out.set(d._id, { report: reportById.get(d.reportId) });
    if (d.warningId != null && warningById.has(d.warningId))
      out.set(d._id, { moderation_warning: warningById.get(d.warningId) });
  }
  return out;
}
