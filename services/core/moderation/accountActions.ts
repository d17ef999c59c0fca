// Moderation of accounts (Mastodon's Admin::AccountAction, Account#suspend!/unsuspend!, silence,
// sensitize): each change is written to the action log, and every action except a plain note
// leaves a strike (AccountWarning) the owner of a local account sees as a `moderation_warning`
// notification and, when asked, in an e-mail. Suspension is reversible: the data stays until an
// administrator deletes it; the account and its content vanish from the API meanwhile (reads
// filter on `suspendedAt`) and its tokens stop working.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { users, type UserDoc } from '../model/users.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { canonicalEmailBlocks } from '../model/signUpBlocks.ts';
import { accountWarnings, reports, type AccountWarningDoc, type WarningAction } from '../model/reports.ts';
import { DomainError, forbidden, notFound, orNotFound, validationFailed } from '../errors.ts';
import type { NewEvent } from '../events/outbox.ts';
import { mailRequestedEvent } from '../mail/request.ts';
import { logAdminAction, setDisabled, type Actor } from '../users/moderation.ts';
import { createCanonicalEmailBlock } from './emailBlocks.ts';
import { resolveReportsOn, getReport } from './reports.ts';
import { deleteStatus } from '../statuses/deleteStatus.ts';

export const ACCOUNT_ACTION_TYPES = ['none', 'sensitive', 'disable', 'silence', 'suspend'] as const;
export type AccountActionType = (typeof ACCOUNT_ACTION_TYPES)[number];

export function acct(a: AccountDoc): string {
  return a.domain ? `${a.username}@${a.domain}` : a.username;
}

/** What every account moderation event names: the account, where it lives, and the moderator (null: the system). */
export function moderatedAccount(target: AccountDoc, actor: Actor) {
  return {
    accountId: String(target._id),
    accountUri: target.uri,
    domain: target.domain,
    actorAccountId: actor === null ? null : String(actor),
  };
}

export async function log(core: Core, action: string, target: AccountDoc, actor: Actor): Promise<void> {
  await logAdminAction(core, actor, action, { type: 'Account', id: target._id, name: acct(target) });
}

export async function reload(core: Core, id: Id): Promise<AccountDoc> {
  return orNotFound(await collection(core.db, accounts).findOne({ _id: id }));
}

export async function userOfAccount(core: Core, account: AccountDoc): Promise<UserDoc | null> {
  if (account.domain !== null) return null;
  return collection(core.db, users).findOne({ accountId: account._id });
}

// ---------------------------------------------------------------------------------------------
// Suspension

export async function suspendAccount(
  core: Core,
  target: AccountDoc,
  actor: Actor,
  opts: { origin?: 'local' | 'remote'; log?: boolean; blockEmail?: boolean } = {},
): Promise<AccountDoc> {
  if (target.suspendedAt) return target;
  const now = new Date();
  const origin = opts.origin ?? 'local';
  const event: NewEvent<'AccountSuspended'> = {
    type: 'AccountSuspended',
    key: String(target._id),
    payload: {
      ...moderatedAccount(target, actor),
      origin,
    },
    verify: { collection: accounts.name, filter: { _id: target._id, suspendedAt: { $ne: null } }, expect: 'exists' },
  };
  await core.outbox.write([event], async () => {
    await collection(core.db, accounts).updateOne(
      { _id: target._id, suspendedAt: null },
      { $set: { suspendedAt: now, suspensionOrigin: origin, updatedAt: now } },
    );
  });
  // A suspended person may not come back under the same address (Mastodon blocks it canonically).
  // (Not when people delete their own account: Mastodon lets the address sign up again.)
  const user = opts.blockEmail === false ? null : await userOfAccount(core, target);
  if (user) {
    await createCanonicalEmailBlock(core, { email: user.email, referenceAccountId: target._id }, actor).catch(
      (err: unknown) => {
        if (!(err instanceof DomainError)) throw err; // already blocked
      },
    );
  }
  if (opts.log !== false) await log(core, 'suspend', target, actor);
  return reload(core, target._id);
}

export async function unsuspendAccount(core: Core, target: AccountDoc, actor: Actor): Promise<AccountDoc> {
  if (!target.suspendedAt) throw forbidden();
  const now = new Date();
  const event: NewEvent<'AccountUnsuspended'> = {
    type: 'AccountUnsuspended',
    key: String(target._id),
    payload: {
      ...moderatedAccount(target, actor),
    },
    verify: { collection: accounts.name, filter: { _id: target._id, suspendedAt: null }, expect: 'exists' },
  };
  await core.outbox.write([event], async () => {
    await collection(core.db, accounts).updateOne(
      { _id: target._id },
      { $set: { suspendedAt: null, suspensionOrigin: null, updatedAt: now } },
    );
  });
  await collection(core.db, canonicalEmailBlocks).deleteMany({ referenceAccountId: target._id });
  await log(core, 'unsuspend', target, actor);
  return reload(core, target._id);
}

// ---------------------------------------------------------------------------------------------
// Silence and sensitive

/** Sets (keeping the first date) or clears a moderation mark of an account, logged as `action`. */
async function setMark(
  core: Core,
  target: AccountDoc,
  mark: 'silencedAt' | 'sensitizedAt',
  on: boolean,
  action: string,
  actor: Actor,
): Promise<AccountDoc> {
  await collection(core.db, accounts).updateOne(
    { _id: target._id },
    { $set: { [mark]: on ? (target[mark] ?? new Date()) : null, updatedAt: new Date() } },
  );
  await log(core, action, target, actor);
  return reload(core, target._id);
}

export function setSilenced(core: Core, target: AccountDoc, silenced: boolean, actor: Actor): Promise<AccountDoc> {
  return setMark(core, target, 'silencedAt', silenced, silenced ? 'silence' : 'unsilence', actor);
}

export function setSensitized(core: Core, target: AccountDoc, sensitized: boolean, actor: Actor): Promise<AccountDoc> {
  return setMark(core, target, 'sensitizedAt', sensitized, sensitized ? 'sensitive' : 'unsensitive', actor);
}

// ---------------------------------------------------------------------------------------------
// Strikes

const WARNING_SUMMARIES: Record<WarningAction, string> = {
  none: 'A moderator has sent you a warning.',
  disable: 'Your account has been frozen: you can no longer use it, but your profile stays intact.',
  mark_statuses_as_sensitive: 'Some of your posts have been marked as sensitive by the moderators.',
  delete_statuses: 'Some of your posts have been removed by the moderators.',
  sensitive: 'From now on, all your uploaded media will be marked as sensitive.',
  silence: 'Your account has been limited: only people who follow you see your posts.',
  suspend: 'Your account has been suspended.',
};

/** Records a strike; the owner of a local account is notified (and mailed when `sendEmail`). */
export async function createStrike(
  core: Core,
  target: AccountDoc,
  input: { action: WarningAction; text: string; statusIds?: Id[]; reportId?: Id | null; sendEmail?: boolean },
  actor: Actor,
): Promise<AccountWarningDoc> {
  const warning: AccountWarningDoc = {
    _id: await nextSerialId(core.db, 'account_warnings'),
    accountId: actor,
    targetAccountId: target._id,
    action: input.action,
    text: input.text,
    statusIds: input.statusIds ?? [],
    reportId: input.reportId ?? null,
    createdAt: new Date(),
  };
  const verify = { collection: accountWarnings.name, filter: { _id: warning._id }, expect: 'exists' as const };
  const events: NewEvent[] = [];
  if (target.domain === null) {
    events.push({
      type: 'AccountWarningCreated',
      key: String(target._id),
      payload: {
        warningId: String(warning._id),
        targetAccountId: String(target._id),
        action: warning.action,
        statusIds: warning.statusIds.map(String),
      },
      verify,
    } satisfies NewEvent<'AccountWarningCreated'>);
    const user = input.sendEmail === false ? null : await userOfAccount(core, target);
    if (user) {
      events.push(
        mailRequestedEvent(
          {
            to: user.email,
            template: 'warning',
            key: String(user._id),
            variables: {
              instance: core.config.localDomain,
              subject:
                warning.action === 'none'
                  ? `You have received a warning from the moderators of ${core.config.localDomain}`
                  : `A moderator of ${core.config.localDomain} has taken action on your account`,
              summary: WARNING_SUMMARIES[warning.action],
              text: warning.text,
            },
          },
          verify,
        ),
      );
    }
  }
  await core.outbox.write(events, async () => {
    await collection(core.db, accountWarnings).insertOne(warning);
  });
  return warning;
}

// ---------------------------------------------------------------------------------------------
// POST /api/v1/admin/accounts/:id/action

export interface AccountActionInput {
  type: string;
  reportId?: Id | null;
  warningPresetId?: string | null;
  text?: string;
  sendEmailNotification?: boolean;
}

export const ACTION_TEXT_MAX = 5_000;

export async function performAccountAction(
  core: Core,
  target: AccountDoc,
  input: AccountActionInput,
  actor: Actor,
): Promise<AccountWarningDoc> {
  if (!(ACCOUNT_ACTION_TYPES as readonly string[]).includes(input.type))
    throw validationFailed('Type is not included in the list');
  const type = input.type as AccountActionType;
  const text = input.text ?? '';
  if (text.length > ACTION_TEXT_MAX)
    throw validationFailed(`Text is too long (maximum is ${ACTION_TEXT_MAX} characters)`);
  const report = input.reportId ? await getReport(core, input.reportId) : null;
  if (report && report.targetAccountId !== target._id) throw notFound();
  const user = await userOfAccount(core, target);
  // `disable` concerns the local login; a remote account has none (Mastodon refuses it too).
  if (type === 'disable' && !user) throw forbidden();
  switch (type) {
    case 'none':
      break;
    case 'sensitive':
      await setSensitized(core, target, true, actor);
      break;
    case 'disable':
      await setDisabled(core, user as UserDoc, true, actor);
      break;
    case 'silence':
      await setSilenced(core, target, true, actor);
      break;
    case 'suspend':
      await suspendAccount(core, target, actor);
      break;
  }
  const warning = await createStrike(
    core,
    target,
    {
      action: type,
      text,
      statusIds: report?.statusIds ?? [],
      reportId: report?._id ?? null,
      sendEmail: input.sendEmailNotification ?? true,
    },
    actor,
  );
  // Acting on an account settles the report it came from, or (for an action) every open one on it.
  if (report) {
    await collection(core.db, reports).updateOne(
      { _id: report._id, actionTakenAt: null },
      { $set: { actionTakenAt: new Date(), actionTakenByAccountId: actor, updatedAt: new Date() } },
    );
  } else if (type !== 'none') {
    await resolveReportsOn(core, target._id, actor);
  }
  return warning;
}

// ---------------------------------------------------------------------------------------------
// Moderator removal of statuses

/** Deletes statuses as a moderator: a `delete_statuses` strike for their author (one per author). */
export async function removeStatusesByModerator(
  core: Core,
  statusIds: Id[],
  actor: Actor,
  opts: { text?: string; reportId?: Id | null; sendEmail?: boolean } = {},
): Promise<AccountWarningDoc[]> {
  const found = await collection(core.db, statuses)
    .find({ _id: { $in: statusIds }, deletedAt: null })
    .toArray();
  const byAuthor = new Map<bigint, StatusDoc[]>();
  for (const s of found) byAuthor.set(s.accountId, [...(byAuthor.get(s.accountId) ?? []), s]);
  const strikes: AccountWarningDoc[] = [];
  for (const [authorId, list] of byAuthor) {
    const author = await collection(core.db, accounts).findOne({ _id: authorId });
    if (!author) continue;
    for (const s of list) await deleteStatus(core, author, s._id);
    for (const s of list)
      await logAdminAction(core, actor, 'destroy', { type: 'Status', id: s._id, name: acct(author) });
    strikes.push(
      await createStrike(
        core,
        author,
        {
          action: 'delete_statuses',
          text: opts.text ?? '',
          statusIds: list.map((s) => s._id),
          reportId: opts.reportId ?? null,
          sendEmail: opts.sendEmail,
        },
        actor,
      ),
    );
  }
  return strikes;
}
