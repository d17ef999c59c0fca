// Reports (Mastodon's ReportService and Report model): users report an account, optionally with
// some of its statuses and the rules they break; staff who may manage reports are notified (the
// notifications pipeline turns ReportCreated into `admin.report`) and mailed; delivery forwards a
// Flag to a remote target's server when asked. Moderators assign, categorise, resolve and reopen.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses } from '../model/statuses.ts';
import { reports, REPORT_CATEGORIES, type ReportCategory, type ReportDoc } from '../model/reports.ts';
import { notFound, orNotFound, validationFailed } from '../errors.ts';
import type { NewEvent } from '../events/outbox.ts';
import { mailRequestedEvent } from '../mail/request.ts';
import { wantsEmail } from '../users/notificationEmails.ts';
import { findRules } from './rules.ts';
import { staffWith } from './staff.ts';
import { logAdminAction, type Actor } from '../users/moderation.ts';

export const REPORT_COMMENT_MAX = 1_000;
/** More statuses than a person can sensibly attach; bounds the work a request can cause. */
export const REPORT_STATUSES_MAX = 100;
export const REPORT_RULES_MAX = 100;

export interface ReportInput {
  statusIds: Id[];
  comment: string;
  category?: string;
  ruleIds: Id[];
  forward: boolean;
  forwardToDomains: string[];
}

function checkCategory(value: string | undefined): ReportCategory | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(REPORT_CATEGORIES as readonly string[]).includes(value))
    throw validationFailed('Category is not included in the list');
  return value as ReportCategory;
}

async function checkRules(core: Core, ruleIds: Id[]): Promise<Id[]> {
  const unique = [...new Set(ruleIds)];
  if (unique.length > REPORT_RULES_MAX) throw validationFailed('Rule ids does not reference valid rules');
  const found = await findRules(core, unique);
  if (found.length !== unique.length) throw validationFailed('Rule ids does not reference valid rules');
  return unique;
}

function reportLink(core: Core, id: Id): string {
  return `${core.config.baseUrl}/admin/reports/${id}`;
}

export async function createReport(
  core: Core,
  reporter: AccountDoc,
  target: AccountDoc,
  input: ReportInput,
): Promise<ReportDoc> {
  if (input.comment.length > REPORT_COMMENT_MAX)
    throw validationFailed(`Comment is too long (maximum is ${REPORT_COMMENT_MAX} characters)`);
  const statusIds = [...new Set(input.statusIds)];
  if (statusIds.length > REPORT_STATUSES_MAX) throw validationFailed('Status ids are too many');
  // Only statuses of the reported account (deleted ones included, as Mastodon's with_discarded).
  const reported =
    statusIds.length === 0
      ? []
      : await collection(core.db, statuses)
          .find(
            { _id: { $in: statusIds }, accountId: target._id },
            { projection: { _id: 1, uri: 1, mentionedAccountIds: 1, inReplyToAccountId: 1 } },
          )
          .toArray();
  if (reported.length !== statusIds.length) throw notFound();
  // Rules make it a violation report (Mastodon forces the category when rule ids are given).
  let category = checkCategory(input.category) ?? 'other';
  let ruleIds: Id[] = [];
  if (input.ruleIds.length > 0) {
    category = 'violation';
    ruleIds = await checkRules(core, input.ruleIds);
  }

  // Forwarding: a Flag to the target's server, and to servers of accounts the statuses involve.
  const forward = input.forward && target.domain !== null;
  let forwardToDomains: string[] = [];
  if (forward && input.forwardToDomains.length > 0) {
    const involved = [...new Set(reported.flatMap((s) => [...s.mentionedAccountIds, s.inReplyToAccountId]))].filter(
      (id): id is Id => id !== null,
    );
    const domains = new Set(
      (
        await collection(core.db, accounts)
          .find({ _id: { $in: involved }, domain: { $ne: null } }, { projection: { domain: 1 } })
          .toArray()
      ).map((a) => (a.domain as string).toLowerCase()),
    );
    forwardToDomains = [...new Set(input.forwardToDomains.map((d) => d.trim().toLowerCase()))].filter(
      (d) => domains.has(d) && d !== target.domain,
    );
  }

  const now = new Date();
  const id = await nextSerialId(core.db, 'reports');
  const doc: ReportDoc = {
    _id: id,
    accountId: reporter._id,
    targetAccountId: target._id,
    statusIds,
    ruleIds,
    comment: input.comment,
    category,
    forwarded: forward,
    forwardToDomains,
    uri: `${core.config.baseUrl}/${crypto.randomUUID()}`,
    assignedAccountId: null,
    actionTakenAt: null,
    actionTakenByAccountId: null,
    createdAt: now,
    updatedAt: now,
  };
  const verify = { collection: reports.name, filter: { _id: id }, expect: 'exists' as const };
  const created: NewEvent<'ReportCreated'> = {
    type: 'ReportCreated',
    key: String(target._id),
    payload: {
      reportId: String(id),
      accountId: String(reporter._id),
      accountDomain: reporter.domain,
      targetAccountId: String(target._id),
      targetAccountUri: target.uri,
      targetDomain: target.domain,
      statusIds: statusIds.map(String),
      statusUris: reported.map((s) => s.uri),
      comment: input.comment,
      category,
      forward,
      forwardToDomains,
    },
    verify,
  };
  const mails = await reportMails(core, doc, reporter, target, verify);
  await core.outbox.write([created, ...mails], async () => {
    await collection(core.db, reports).insertOne(doc);
  });
  return doc;
}

/** The e-mail to each staff member who may manage reports (Mastodon's AdminMailer#new_report). */
async function reportMails(
  core: Core,
  report: ReportDoc,
  reporter: AccountDoc,
  target: AccountDoc,
  verify: NewEvent['verify'],
): Promise<NewEvent[]> {
  // Mastodon's allows_report_emails?: the staff member's "New report is submitted" choice.
  const staff = (await staffWith(core, 'manage_reports')).filter((u) => wantsEmail(u, 'report'));
  if (staff.length === 0) return [];
  const names = new Map(
    (
      await collection(core.db, accounts)
        .find({ _id: { $in: staff.map((u) => u.accountId) } }, { projection: { username: 1 } })
        .toArray()
    ).map((a) => [a._id, a.username]),
  );
  const acct = (a: AccountDoc) => (a.domain ? `${a.username}@${a.domain}` : a.username);
  return staff.map((user) =>
    mailRequestedEvent(
      {
        to: user.email,
        template: 'new_report',
        key: String(user._id),
        variables: {
          instance: core.config.localDomain,
          username: names.get(user.accountId) ?? '',
          reportId: String(report._id),
          reporter: acct(reporter),
          target: acct(target),
          comment: report.comment,
          link: reportLink(core, report._id),
        },
      },
      verify,
    ),
  );
}

export async function getReport(core: Core, id: Id): Promise<ReportDoc> {
  return orNotFound(await collection(core.db, reports).findOne({ _id: id }));
}

async function changeReport(
  core: Core,
  report: ReportDoc,
  set: Partial<ReportDoc>,
  action: string,
  actor: Actor,
): Promise<ReportDoc> {
  const updated = await collection(core.db, reports).findOneAndUpdate(
    { _id: report._id },
    { $set: { ...set, updatedAt: new Date() } },
    { returnDocument: 'after' },
  );
  if (!updated) throw notFound();
  await logAdminAction(core, actor, action, { type: 'Report', id: report._id, name: String(report._id) });
  return updated;
}

/** PUT /api/v1/admin/reports/:id: category and rules (rules only stay with `violation`). */
export async function updateReport(
  core: Core,
  report: ReportDoc,
  input: { category?: string; ruleIds?: Id[] },
  actor: Actor,
): Promise<ReportDoc> {
  const category = checkCategory(input.category) ?? report.category;
  let ruleIds = input.ruleIds !== undefined ? await checkRules(core, input.ruleIds) : report.ruleIds;
  if (category !== 'violation') ruleIds = [];
  return changeReport(core, report, { category, ruleIds }, 'update', actor);
}

export function assignReport(core: Core, report: ReportDoc, assignee: Id | null, actor: Actor): Promise<ReportDoc> {
  return changeReport(
    core,
    report,
    { assignedAccountId: assignee },
    assignee === null ? 'unassigned' : 'assigned_to_self',
    actor,
  );
}

export function resolveReport(core: Core, report: ReportDoc, actor: Actor): Promise<ReportDoc> {
  if (report.actionTakenAt) return Promise.resolve(report);
  return changeReport(core, report, { actionTakenAt: new Date(), actionTakenByAccountId: actor }, 'resolve', actor);
}

export function reopenReport(core: Core, report: ReportDoc, actor: Actor): Promise<ReportDoc> {
  return changeReport(core, report, { actionTakenAt: null, actionTakenByAccountId: null }, 'reopen', actor);
}

/** Resolves every open report on an account (an account action does, as Mastodon's). */
export async function resolveReportsOn(core: Core, targetAccountId: Id, actor: Actor): Promise<void> {
  await collection(core.db, reports).updateMany(
    { targetAccountId, actionTakenAt: null },
    { $set: { actionTakenAt: new Date(), actionTakenByAccountId: actor, updatedAt: new Date() } },
  );
}
