// Muting (Mastodon's MuteService): hides the account's statuses, and with `notifications` its
// notifications too; `duration` seconds (0 = forever) sets an expiry that the scheduler enforces.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { findPageIn, type PageParams } from '../db/pages.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import { markFanOutFilters } from '../feeds/fanOutFilters.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { mutes, type MuteDoc } from '../model/mutes.ts';
import { forbidden } from '../errors.ts';
import type { NewEvent } from '../events/outbox.ts';
import { graphPair } from './events.ts';
import { accountsById } from './unfollow.ts';

type Pair = Pick<AccountDoc, '_id' | 'domain'>;

function muteCreated(mute: MuteDoc, account: Pair, target: Pair): NewEvent<'MuteCreated'> {
  return {
    type: 'MuteCreated',
    key: String(account._id),
    payload: {
      muteId: String(mute._id),
      ...graphPair(account, target),
      hideNotifications: mute.hideNotifications,
      expiresAt: mute.expiresAt,
    },
    verify: { collection: mutes.name, filter: { _id: mute._id }, expect: 'exists' },
  };
}

function muteDeleted(mute: MuteDoc, account: Pair, target: Pair, expired: boolean): NewEvent<'MuteDeleted'> {
  return {
    type: 'MuteDeleted',
    key: String(account._id),
    payload: { muteId: String(mute._id), ...graphPair(account, target), expired },
    verify: { collection: mutes.name, filter: { _id: mute._id }, expect: 'absent' },
  };
}

export async function muteAccount(
  core: Core,
  account: AccountDoc,
  target: AccountDoc,
  opts: { notifications?: boolean; durationSeconds?: number } = {},
): Promise<void> {
  if (account._id === target._id) throw forbidden();
  const hideNotifications = opts.notifications ?? true;
  const seconds = opts.durationSeconds ?? 0;
  const expiresAt = seconds > 0 ? new Date(Date.now() + seconds * 1000) : null;
  const coll = collection(core.db, mutes);
  const existing = await coll.findOne({ accountId: account._id, targetAccountId: target._id });
  if (existing) {
    // Muting again updates the mute (Mastodon replaces it): a new event tells consumers.
    const updated: MuteDoc = { ...existing, hideNotifications, expiresAt };
    await core.outbox.write([muteCreated(updated, account, target)], () =>
      coll.updateOne({ _id: existing._id }, { $set: { hideNotifications, expiresAt } }),
    );
    return;
  }
  const mute: MuteDoc = {
    _id: await nextSerialId(core.db, 'mutes'),
    accountId: account._id,
    targetAccountId: target._id,
    hideNotifications,
    expiresAt,
    createdAt: new Date(),
  };
  await markFanOutFilters(core, [target._id]);
  await core.outbox.write([muteCreated(mute, account, target)], async () => {
    await insertOnce(coll, mute);
  });
}

export async function unmuteAccount(core: Core, account: AccountDoc, target: AccountDoc): Promise<void> {
  const mute = await collection(core.db, mutes).findOne({ accountId: account._id, targetAccountId: target._id });
  if (!mute) return;
  await core.outbox.write([muteDeleted(mute, account, target, false)], () =>
    collection(core.db, mutes).deleteOne({ _id: mute._id }),
  );
}

/** Ends mutes whose time is up (the scheduler pipeline calls this); returns how many ended. */
export async function endExpiredMutes(core: Core, now = new Date(), batch = 500): Promise<number> {
  const due = await collection(core.db, mutes)
    .find({ expiresAt: { $lte: now } })
    .sort({ expiresAt: 1 })
    .limit(batch)
    .toArray();
  if (due.length === 0) return 0;
  const people = await accountsById(core, [...new Set(due.flatMap((m) => [m.accountId, m.targetAccountId]))]);
  let ended = 0;
  for (const mute of due) {
    const account = people.get(mute.accountId) ?? { _id: mute.accountId, domain: null };
    const target = people.get(mute.targetAccountId) ?? { _id: mute.targetAccountId, domain: null };
    await core.outbox.write([muteDeleted(mute, account, target, true)], async () => {
      const res = await collection(core.db, mutes).deleteOne({ _id: mute._id, expiresAt: mute.expiresAt });
      ended += res.deletedCount;
    });
  }
  return ended;
}

/** A page of the account's mutes, newest first, those that have expired by `now` left out. */
export async function mutesPage(core: Core, accountId: Id, p: PageParams, now = new Date()): Promise<MuteDoc[]> {
  return (await findPageIn(core.db, mutes, { accountId }, p)).filter((m) => m.expiresAt === null || m.expiresAt > now);
}
