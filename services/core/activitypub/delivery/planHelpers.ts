// What the delivery plans of every kind of event share: the plan itself and the lookups they start with.
import type { Core } from '../../context.ts';
import type { Id } from '../../ids.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import { statuses, type StatusDoc } from '../../model/statuses.ts';
import type { JsonLd } from '../render/context.ts';
import { followerInboxes, inboxesOf, interactorInboxes, type Inboxes } from './audience.ts';

export interface DeliveryPlan {
  /** Stable id of the activity (also for activities without an `id`, such as Add/Remove). */
  activityId: string;
  activityType: string;
  activity: JsonLd;
  /** Local account that signs; null for the instance actor. */
  signerAccountId: string | null;
  inboxes: Inboxes;
}

export const big = (s: string): Id => BigInt(s);

export async function localAccount(core: Core, id: string): Promise<AccountDoc | null> {
  return collection(core.db, accounts).findOne({ _id: big(id), domain: null });
}

export async function anyAccount(core: Core, id: string): Promise<AccountDoc | null> {
  return collection(core.db, accounts).findOne({ _id: big(id) });
}

export async function statusById(core: Core, id: string | Id): Promise<StatusDoc | null> {
  return collection(core.db, statuses).findOne({ _id: typeof id === 'string' ? big(id) : id });
}

export function plan(activityId: string, activity: JsonLd, signer: AccountDoc | null, inboxes: Inboxes): DeliveryPlan {
  return {
    activityId,
    activityType: String(activity.type),
    activity,
    signerAccountId: signer ? String(signer._id) : null,
    inboxes,
  };
}

/** One inbox: the personal inbox of a remote account. */
export function personal(target: { inbox: string; account: AccountDoc }): Inboxes {
  return new Map([[target.inbox, String(target.account._id)]]);
}

/** Where a status (its Create, Update, Delete) goes: Mastodon's StatusReachFinder, simplified. */
export async function statusReach(
  core: Core,
  status: Pick<StatusDoc, '_id' | 'accountId' | 'visibility' | 'inReplyToAccountId' | 'mentionedAccountIds'>,
  withInteractors: boolean,
): Promise<Inboxes> {
  const out: Inboxes = new Map();
  if (status.visibility !== 'direct') {
    await followerInboxes(core, status.accountId, out);
    if (status.inReplyToAccountId !== null) await inboxesOf(core, [status.inReplyToAccountId], out);
  }
  await inboxesOf(core, status.mentionedAccountIds, out);
  if (withInteractors && (status.visibility === 'public' || status.visibility === 'unlisted'))
    await interactorInboxes(core, status._id, out);
  return out;
}
