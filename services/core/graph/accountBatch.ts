// One action over accounts chosen on a relationships page (Mastodon's Form::AccountBatch):
// unfollow them, remove them from one's followers, unblock or unmute them. Ids that name no
// account are skipped, as Mastodon does.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { accountsById, removeFromFollowers, unfollowAccount } from './unfollow.ts';
import { unblockAccount } from './block.ts';
import { unmuteAccount } from './mute.ts';

export const ACCOUNT_BATCH_ACTIONS = ['unfollow', 'remove_from_followers', 'unblock', 'unmute'] as const;
export type AccountBatchAction = (typeof ACCOUNT_BATCH_ACTIONS)[number];

/** At most this many accounts in one batch (a page shows 40). */
export const ACCOUNT_BATCH_MAX = 200;

const OPERATIONS: Record<AccountBatchAction, (core: Core, owner: AccountDoc, other: AccountDoc) => Promise<void>> = {
  unfollow: unfollowAccount,
  remove_from_followers: removeFromFollowers,
  unblock: unblockAccount,
  unmute: unmuteAccount,
};

export function isAccountBatchAction(value: string): value is AccountBatchAction {
  return (ACCOUNT_BATCH_ACTIONS as readonly string[]).includes(value);
}

/** Applies `action` to each account named; how many there were. */
export async function applyAccountBatch(
  core: Core,
  owner: AccountDoc,
  action: AccountBatchAction,
  ids: Id[],
): Promise<number> {
  const others = await accountsById(core, [...new Set(ids)].slice(0, ACCOUNT_BATCH_MAX));
  for (const other of others.values()) if (other._id !== owner._id) await OPERATIONS[action](core, owner, other);
  return others.size;
}
