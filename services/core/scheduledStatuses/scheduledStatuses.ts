// Scheduled statuses: what POST /api/v1/statuses with `scheduled_at` creates, their listing and
// rescheduling, and their publication by the scheduler pipeline — exactly once, even with several
// scheduler processes: a due record is claimed atomically (unique claim insert, then a lease) before it
// is posted (see claims.ts), and the post carries an idempotency key derived from the record's id,
// so a process that dies between claim and post neither loses the status nor doubles it.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId, statusIdFloor } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { mediaAttachments } from '../model/media.ts';
import { scheduledStatuses, type ScheduledStatusDoc, type ScheduledStatusParams } from '../model/scheduledStatuses.ts';
import { notFound, validationFailed } from '../errors.ts';
import { loadAttachmentsForPosting, holdForScheduledStatus } from '../media/statusAttachments.ts';
import { validatePollInput } from '../polls/polls.ts';
import { postStatus, checkLength, type PostStatusInput } from '../statuses/postStatus.ts';
import { userOfAccount } from '../moderation/accountActions.ts';
import { StatusError } from '../statuses/errors.ts';
import { claimAttempt } from './claims.ts';

export const TOTAL_LIMIT = 300;
export const DAILY_LIMIT = 25;
/** A record whose publication failed this many times for other reasons than validation is dropped. */
const MAX_ATTEMPTS = 10;

/** The idempotency key the scheduler posts a scheduled status with. */
export function publicationKey(id: Id): string {
  return `scheduled-status:${id}`;
}

function checkTime(core: Core, scheduledAt: Date, now = new Date()): void {
  if (Number.isNaN(scheduledAt.getTime())) throw validationFailed('Scheduled at is invalid');
  const min = now.getTime() + core.config.scheduledStatusMinDelaySeconds * 1000;
  if (scheduledAt.getTime() < min) throw validationFailed('Scheduled at The scheduled date must be in the future');
}

async function checkLimits(core: Core, accountId: Id, scheduledAt: Date, except: Id | null = null): Promise<void> {
  const coll = collection(core.db, scheduledStatuses);
  const notSelf = except === null ? {} : { _id: { $ne: except } };
  const total = await coll.countDocuments({ accountId, ...notSelf });
  if (total >= TOTAL_LIMIT) throw validationFailed(`You have exceeded the limit of ${TOTAL_LIMIT} scheduled posts`);
  const day = new Date(Date.UTC(scheduledAt.getUTCFullYear(), scheduledAt.getUTCMonth(), scheduledAt.getUTCDate()));
  const next = new Date(day.getTime() + 86_400_000);
  const sameDay = await coll.countDocuments({ accountId, scheduledAt: { $gte: day, $lt: next }, ...notSelf });
  if (sameDay >= DAILY_LIMIT)
    throw validationFailed(`You have exceeded the limit of ${DAILY_LIMIT} scheduled posts for that day`);
}

/**
 * Schedules a status (the statuses API calls this for `scheduled_at`). Validates the time, the
 * limits, the media (reserved for it) and the poll; the text is checked again when it is posted.
 */
export async function createScheduledStatus(
  core: Core,
  account: AccountDoc,
  params: ScheduledStatusParams,
  scheduledAt: Date,
  opts: { applicationId?: Id | null; idempotencyKey?: string | null } = {},
): Promise<ScheduledStatusDoc> {
  checkTime(core, scheduledAt);
  // The text is checked now as well (Mastodon validates a scheduled post like an immediate one).
  if (params.text.trim() === '' && params.mediaIds.length === 0 && !params.poll)
    throw validationFailed("Text can't be blank");
  if (params.mediaIds.length > 0 && params.poll)
    throw validationFailed('Media attachments cannot be combined with a poll');
  checkLength(params.text, params.spoilerText);
  await checkLimits(core, account._id, scheduledAt);
  const media = await loadAttachmentsForPosting(core, account._id, params.mediaIds);
  if (media.some((m) => m.scheduledStatusId !== null)) throw validationFailed('Media attachments are invalid');
  const poll = params.poll ? validatePollInput(params.poll) : null;
  const doc: ScheduledStatusDoc = {
    _id: await nextSerialId(core.db, 'scheduled_statuses'),
    accountId: account._id,
    scheduledAt,
    params: { ...params, mediaIds: media.map((m) => m._id), poll },
    applicationId: opts.applicationId ?? null,
    idempotencyKey: opts.idempotencyKey ?? null,
    claimedUntil: null,
    claimedBy: null,
    attempts: 0,
    lastError: null,
    createdAt: new Date(),
  };
  await core.outbox.write(
    [
      {
        type: 'ScheduledStatusCreated',
        key: String(account._id),
        payload: { scheduledStatusId: String(doc._id), accountId: String(account._id), scheduledAt },
        verify: { collection: scheduledStatuses.name, filter: { _id: doc._id }, expect: 'exists' },
      },
    ],
    async () => {
      await collection(core.db, scheduledStatuses).insertOne(doc);
      await holdForScheduledStatus(core, doc.params.mediaIds, doc._id);
    },
  );
  return doc;
}

export async function findOwnScheduledStatus(core: Core, accountId: Id, id: Id): Promise<ScheduledStatusDoc> {
  const doc = await collection(core.db, scheduledStatuses).findOne({ _id: id, accountId });
  if (!doc) throw notFound();
  return doc;
}

export async function findScheduledStatus(core: Core, id: Id): Promise<ScheduledStatusDoc | null> {
  return collection(core.db, scheduledStatuses).findOne({ _id: id });
}

/** A scheduled post stores its parameters with the author's defaults resolved. */
export async function scheduledParamsOf(
  core: Core,
  account: AccountDoc,
  input: PostStatusInput,
): Promise<ScheduledStatusParams> {
  const user = await userOfAccount(core, account);
  const spoilerText = (input.spoilerText ?? '').trim();
  return {
    text: input.text ?? '',
    spoilerText,
    sensitive: (input.sensitive ?? user?.settings.defaultSensitive ?? false) || spoilerText !== '',
    visibility: input.visibility ?? user?.settings.defaultPrivacy ?? 'public',
    language: input.language ?? null,
    inReplyToId: input.inReplyToId ?? null,
    mediaIds: input.mediaIds ?? [],
    poll: input.poll ?? null,
    quotedStatusId: input.quotedStatusId ?? null,
    quotePolicy: input.quotePolicy ?? null,
  };
}

export interface Page {
  maxId?: Id | null;
  sinceId?: Id | null;
  minId?: Id | null;
  limit: number;
}

/** The account's scheduled statuses, newest id first (Mastodon paginates them by id). */
export async function listScheduledStatuses(core: Core, accountId: Id, page: Page): Promise<ScheduledStatusDoc[]> {
  if (page.limit <= 0) return [];
  const range: Record<string, Id> = {};
  if (page.maxId) range.$lt = page.maxId;
  if (page.sinceId) range.$gt = page.sinceId;
  if (page.minId) range.$gt = page.minId;
  const filter = Object.keys(range).length > 0 ? { accountId, _id: range } : { accountId };
  const coll = collection(core.db, scheduledStatuses);
  if (page.minId && !page.sinceId) {
    const asc = await coll.find(filter).sort({ _id: 1 }).limit(page.limit).toArray();
    return asc.reverse();
  }
  return coll.find(filter).sort({ _id: -1 }).limit(page.limit).toArray();
}

/** PUT /api/v1/scheduled_statuses/:id: a new time, with the same rules as at creation. */
export async function rescheduleStatus(
  core: Core,
  accountId: Id,
  id: Id,
  scheduledAt: Date,
): Promise<ScheduledStatusDoc> {
  await findOwnScheduledStatus(core, accountId, id);
  checkTime(core, scheduledAt);
  await checkLimits(core, accountId, scheduledAt, id);
  const doc = await collection(core.db, scheduledStatuses).findOneAndUpdate(
    // A record a scheduler is publishing right now cannot be moved any more.
    { _id: id, accountId, $or: [{ claimedUntil: null }, { claimedUntil: { $lte: new Date() } }] },
    { $set: { scheduledAt } },
    { returnDocument: 'after' },
  );
  if (!doc) throw notFound();
  return doc;
}

/** Cancels a scheduled status; its media become unattached again (Mastodon nullifies them). */
export async function deleteScheduledStatus(core: Core, accountId: Id, id: Id): Promise<void> {
  const res = await collection(core.db, scheduledStatuses).deleteOne({ _id: id, accountId });
  if (res.deletedCount === 0) throw notFound();
  await releaseMedia(core, id);
}

async function releaseMedia(core: Core, scheduledStatusId: Id): Promise<void> {
  await collection(core.db, mediaAttachments).updateMany(
    { scheduledStatusId, statusId: null },
    { $set: { scheduledStatusId: null, updatedAt: new Date() } },
  );
}

/**
 * After a crash between posting and Redis remembering the idempotency result, the status may exist
 * already: look for the author's status posted since the scheduled time with the same text.
 */
async function alreadyPublished(core: Core, doc: ScheduledStatusDoc): Promise<StatusDoc | null> {
  return collection(core.db, statuses).findOne({
    accountId: doc.accountId,
    _id: { $gte: statusIdFloor(doc.scheduledAt) },
    text: doc.params.text,
    inReplyToId: doc.params.inReplyToId,
    reblogOfId: null,
  });
}

export interface PublishOptions {
  /** Who claims (process id); for the record. */
  workerId: string;
  now?: Date;
  /** How long a claim holds before another process may take the record over. */
  leaseMs?: number;
  limit?: number;
}

/**
 * Publishes every due scheduled status this process manages to claim. Returns the posted statuses.
 * Safe to run in any number of processes at once (see claims.ts).
 */
export async function publishDueScheduledStatuses(core: Core, opts: PublishOptions): Promise<StatusDoc[]> {
  const coll = collection(core.db, scheduledStatuses);
  const leaseMs = opts.leaseMs ?? 60_000;
  const now = opts.now ?? new Date();
  const due = await coll
    .find({ scheduledAt: { $lte: now }, $or: [{ claimedUntil: null }, { claimedUntil: { $lte: now } }] })
    .sort({ scheduledAt: 1 })
    .limit(opts.limit ?? 100)
    .toArray();
  const posted: StatusDoc[] = [];
  for (const candidate of due) {
    if (!(await claimAttempt(core, `scheduled_status:${candidate._id}`, candidate.attempts, opts.workerId))) continue;
    // Ours now. Read it again: it may have been published (and removed) since the list was read.
    const current = await coll.findOne({ _id: candidate._id });
    if (!current || current.attempts !== candidate.attempts) continue;
    const claimedUntil = new Date(Date.now() + leaseMs);
    await coll.updateOne(
      { _id: current._id },
      { $set: { claimedUntil, claimedBy: opts.workerId, attempts: current.attempts + 1 } },
    );
    const status = await publishClaimed(core, {
      ...current,
      claimedUntil,
      claimedBy: opts.workerId,
      attempts: current.attempts + 1,
    });
    if (status) posted.push(status);
  }
  return posted;
}

async function publishClaimed(core: Core, doc: ScheduledStatusDoc): Promise<StatusDoc | null> {
  const coll = collection(core.db, scheduledStatuses);
  const done = async () => {
    await coll.deleteOne({ _id: doc._id });
  };
  const author = await collection(core.db, accounts).findOne({ _id: doc.accountId });
  if (!author || author.suspendedAt) {
    await done();
    await releaseMedia(core, doc._id);
    return null;
  }
  try {
    const earlier = doc.attempts > 1 ? await alreadyPublished(core, doc) : null;
    const p = doc.params;
    const status =
      earlier ??
      (await postStatus(
        core,
        author,
        {
          text: p.text,
          spoilerText: p.spoilerText,
          sensitive: p.sensitive,
          visibility: p.visibility,
          language: p.language,
          inReplyToId: p.inReplyToId,
          mediaIds: p.mediaIds,
          poll: p.poll,
          quotedStatusId: p.quotedStatusId ?? null,
          quotePolicy: p.quotePolicy ?? null,
        },
        { applicationId: doc.applicationId, idempotencyKey: publicationKey(doc._id) },
      ));
    await done();
    return earlier ? null : status;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const invalid =
      (err instanceof StatusError && err.kind !== 'unavailable') || (err as { statusCode?: number }).statusCode === 422;
    if (invalid || doc.attempts >= MAX_ATTEMPTS) {
      // Like Mastodon: a scheduled post that can no longer be posted (reply target gone, ...) is dropped.
      core.logger.warn({ scheduledStatusId: String(doc._id), err: message }, 'scheduled status dropped');
      await done();
      await releaseMedia(core, doc._id);
      return null;
    }
    // Try again after a backoff (the lease keeps other processes away until then).
    const retryAt = new Date(Date.now() + Math.min(60_000, 1000 * 2 ** doc.attempts));
    await coll.updateOne(
      { _id: doc._id, claimedBy: doc.claimedBy },
      { $set: { claimedUntil: retryAt, lastError: message } },
    );
    core.logger.warn(
      { scheduledStatusId: String(doc._id), err: message },
      'scheduled status publication failed, will retry',
    );
    return null;
  }
}
