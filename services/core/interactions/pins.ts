// Pinning own statuses to the profile (public, unlisted and private; never direct or reblogs).
import { dropViewerFlags } from './viewerFlags.ts';
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import type { Filter } from 'mongodb';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { pins, type PinDoc } from '../model/pins.ts';
import type { Id } from '../ids.ts';
import { findRecordPage, type PageParams } from '../db/pages.ts';
import { LIMITS } from '../instance/limits.ts';
import { statusValidation } from '../statuses/errors.ts';
import { writeVerification, type NewEvent } from '../events/outbox.ts';

function pinEvent(type: 'StatusPinned' | 'StatusUnpinned', account: AccountDoc, status: StatusDoc): NewEvent {
  return {
    type,
    key: String(account._id),
    payload: { accountId: String(account._id), statusId: String(status._id), statusUri: status.uri },
    verify: writeVerification('status_pins', { accountId: account._id, statusId: status._id }, type === 'StatusPinned'),
  };
}

export async function pinStatus(core: Core, account: AccountDoc, status: StatusDoc): Promise<void> {
  if (status.accountId !== account._id || status.reblogOfId !== null)
    throw statusValidation("Someone else's post cannot be pinned");
  if (status.visibility === 'direct')
    throw statusValidation('Posts that are only visible to mentioned users cannot be pinned');
  const coll = collection(core.db, pins);
  if (await coll.findOne({ accountId: account._id, statusId: status._id })) return;
  if ((await coll.countDocuments({ accountId: account._id })) >= LIMITS.accounts.maxPinnedStatuses) {
    throw statusValidation('You have already pinned the maximum number of posts');
  }
  const id = await nextSerialId(core.db, 'status_pins');
  await core.outbox.write([pinEvent('StatusPinned', account, status)], async () => {
    await insertOnce(coll, { _id: id, accountId: account._id, statusId: status._id, createdAt: new Date() });
  });
  await dropViewerFlags(core, account._id);
}

export async function unpinStatus(core: Core, account: AccountDoc, status: StatusDoc): Promise<void> {
  const coll = collection(core.db, pins);
  if (!(await coll.findOne({ accountId: account._id, statusId: status._id }))) return;
  await core.outbox.write([pinEvent('StatusUnpinned', account, status)], async () => {
    await coll.deleteOne({ accountId: account._id, statusId: status._id });
  });
  await dropViewerFlags(core, account._id);
}

/**
 * A page of the account's pins (newest pin first) and their statuses that match `filter` (the
 * account-statuses filters), in pin order.
 */
export async function pinnedStatusesPage(
  core: Core,
  accountId: Id,
  filter: Filter<StatusDoc>,
  page: PageParams,
): Promise<{ pins: PinDoc[]; statuses: StatusDoc[] }> {
  const found = await findRecordPage(core.db, pins, { accountId }, page, statuses, (pin) => pin.statusId, filter);
  return { pins: found.records, statuses: found.targets };
}

/** The ids of the account's `limit` most recently pinned statuses, most recent first. */
export async function recentlyPinnedIds(core: Core, accountId: Id, limit: number): Promise<Id[]> {
  const pinned = await collection(core.db, pins).find({ accountId }).sort({ _id: -1 }).limit(limit).toArray();
  return pinned.map((p) => p.statusId);
}
