// Domains an account blocks for itself (Mastodon's AccountDomainBlock): statuses, notifications
// and followers from that domain go away for this account.
import { domainToASCII } from 'node:url';
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { findPageIn, type PageParams } from '../db/pages.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { accountDomainBlocks, type AccountDomainBlockDoc } from '../model/accountDomainBlocks.ts';
import { follows } from '../model/follows.ts';
import { accounts } from '../model/accounts.ts';
import { validationFailed } from '../errors.ts';
import { writeVerification, type NewEvent } from '../events/outbox.ts';
import { endFollow } from './unfollow.ts';

/** Lower case, punycode, no trailing dot; a URL or `user@domain` gives its host. null if invalid. */
export function normalizeDomain(input: string): string | null {
  let raw = input.trim();
  if (raw.includes('://')) {
    try {
      raw = new URL(raw).hostname;
    } catch {
      return null;
    }
  }
  raw = raw.replace(/^\*\./, '').replace(/\.+$/, '');
  if (raw.includes('@')) raw = raw.slice(raw.lastIndexOf('@') + 1);
  if (!raw || raw.length > 253) return null;
  const ascii = domainToASCII(raw.toLowerCase());
  if (!ascii || !/^[a-z0-9.-]+$/.test(ascii) || ascii.startsWith('.') || ascii.includes('..')) return null;
  return ascii;
}

function domainEvent(
  type: 'DomainBlockCreated' | 'DomainBlockDeleted',
  accountId: bigint,
  domain: string,
  id: bigint,
): NewEvent {
  return {
    type,
    key: String(accountId),
    payload: { accountId: String(accountId), domain },
    verify: writeVerification(accountDomainBlocks.name, { _id: id }, type === 'DomainBlockCreated'),
  };
}

const invalidDomain = () => validationFailed('Domain is not a valid domain name');

export async function blockDomain(core: Core, account: AccountDoc, input: string): Promise<void> {
  const domain = normalizeDomain(input);
  if (!domain) throw invalidDomain();
  if (domain === core.config.localDomain.toLowerCase()) throw validationFailed('Domain cannot be your own');
  const coll = collection(core.db, accountDomainBlocks);
  if (await coll.findOne({ accountId: account._id, domain })) return;
  const id = await nextSerialId(core.db, 'account_domain_blocks');
  await core.outbox.write([domainEvent('DomainBlockCreated', account._id, domain, id)], async () => {
    await insertOnce(coll, { _id: id, accountId: account._id, domain, createdAt: new Date() });
  });
  // Followers on that domain stop following (Mastodon's AfterAccountDomainBlockWorker).
  const followerIds = (
    await collection(core.db, follows)
      .find({ targetAccountId: account._id }, { projection: { accountId: 1 } })
      .toArray()
  ).map((f) => f.accountId);
  if (followerIds.length === 0) return;
  const onDomain = await collection(core.db, accounts)
    .find({ _id: { $in: followerIds }, domain }, { projection: { _id: 1, domain: 1 } })
    .toArray();
  for (const follower of onDomain) await endFollow(core, follower, account, 'BLOCK', account);
}

export async function unblockDomain(core: Core, account: AccountDoc, input: string): Promise<void> {
  const domain = normalizeDomain(input);
  if (!domain) throw invalidDomain();
  const block = await collection(core.db, accountDomainBlocks).findOne({ accountId: account._id, domain });
  if (!block) return;
  await core.outbox.write([domainEvent('DomainBlockDeleted', account._id, domain, block._id)], () =>
    collection(core.db, accountDomainBlocks).deleteOne({ _id: block._id }),
  );
}

/** A page of the domains the account blocks (its records), newest first. */
export function domainBlocksPage(core: Core, accountId: Id, p: PageParams): Promise<AccountDomainBlockDoc[]> {
  return findPageIn(core.db, accountDomainBlocks, { accountId }, p);
}
