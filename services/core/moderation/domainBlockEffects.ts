// What a domain block does to the accounts of the domain (and its subdomains), as Mastodon's
// BlockDomainService / UnblockDomainService: `silence` limits them, `suspend` suspends them and
// ends the follows between them and local accounts; lifting or softening a block undoes exactly
// what the block did (accounts whose limit carries the block's timestamp).
import type { Filter } from 'mongodb';
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { statuses } from '../model/statuses.ts';
import { favourites } from '../model/favourites.ts';
import { deleteNotificationsFrom } from '../notifications/groups.ts';
import type { DomainBlockDoc } from '../model/instanceDomainBlocks.ts';
import { endFollow } from '../graph/unfollow.ts';
import { suspendAccount, unsuspendAccount } from './accountActions.ts';
import type { DomainBlockChange } from './domainBlocks.ts';
import { escapeRegex } from '../text/escapeRegex.ts';

/** Accounts on the domain or a subdomain of it. */
export function onDomain(domain: string): Filter<AccountDoc> {
  return { $or: [{ domain }, { domain: { $regex: `\\.${escapeRegex(domain)}$` } }] };
}

async function applyBlock(core: Core, block: DomainBlockDoc, actor: bigint | null): Promise<void> {
  const coll = collection(core.db, accounts);
  if (block.severity === 'silence') {
    await coll.updateMany(
      { ...onDomain(block.domain), silencedAt: null },
      { $set: { silencedAt: block.createdAt, updatedAt: new Date() } },
    );
    return;
  }
  if (block.severity !== 'suspend') return;
  const targets = await coll.find({ ...onDomain(block.domain), suspendedAt: null }).toArray();
  for (const account of targets) {
    await suspendAccount(core, account, actor, { log: false });
    await coll.updateOne({ _id: account._id }, { $set: { suspendedAt: block.createdAt } });
    // Follows with local accounts end in both directions.
    const pair = { _id: account._id, domain: account.domain };
    const outgoing = await collection(core.db, follows).find({ accountId: account._id }).toArray();
    const incoming = await collection(core.db, follows).find({ targetAccountId: account._id }).toArray();
    const others = new Map(
      (
        await coll
          .find(
            {
              _id: { $in: [...outgoing.map((f) => f.targetAccountId), ...incoming.map((f) => f.accountId)] },
              domain: null,
            },
            { projection: { _id: 1, domain: 1 } },
          )
          .toArray()
      ).map((a) => [a._id, a]),
    );
    for (const f of outgoing) {
      const local = others.get(f.targetAccountId);
      if (local) await endFollow(core, pair, local, 'BLOCK', local);
    }
    for (const f of incoming) {
      const local = others.get(f.accountId);
      if (local) await endFollow(core, local, pair, 'BLOCK', local);
    }
  }
}

async function liftBlock(core: Core, block: DomainBlockDoc, actor: bigint | null): Promise<void> {
  const coll = collection(core.db, accounts);
  if (block.severity === 'silence') {
    await coll.updateMany(
      { ...onDomain(block.domain), silencedAt: block.createdAt },
      { $set: { silencedAt: null, updatedAt: new Date() } },
    );
  }
  if (block.severity === 'suspend') {
    const targets = await coll.find({ ...onDomain(block.domain), suspendedAt: block.createdAt }).toArray();
    for (const account of targets) await unsuspendAccount(core, account, actor);
  }
}

export async function applyDomainBlockChange(core: Core, change: DomainBlockChange): Promise<void> {
  switch (change.kind) {
    case 'created':
      return applyBlock(core, change.block, change.actor);
    case 'deleted':
      return liftBlock(core, change.block, change.actor);
    case 'updated':
      if (change.previous && change.previous.severity !== change.block.severity) {
        await liftBlock(core, change.previous, change.actor);
        await applyBlock(core, change.block, change.actor);
      }
      return;
  }
}

/**
 * Removes every account of a domain (and its subdomains) with what it left here: statuses, follows
 * with local accounts (counts kept right), favourites, notifications (tootctl domains purge).
 * Returns how many accounts went.
 */
export async function purgeDomain(core: Core, domain: string): Promise<number> {
  const coll = collection(core.db, accounts);
  const targets = await coll.find(onDomain(domain), { projection: { _id: 1, domain: 1 } }).toArray();
  for (const account of targets) {
    const pair = { _id: account._id, domain: account.domain };
    const outgoing = await collection(core.db, follows).find({ accountId: account._id }).toArray();
    for (const f of outgoing) await endFollow(core, pair, { _id: f.targetAccountId, domain: null }, 'UNFOLLOW', pair);
    const incoming = await collection(core.db, follows).find({ targetAccountId: account._id }).toArray();
    for (const f of incoming)
      await endFollow(core, { _id: f.accountId, domain: null }, pair, 'REMOVED_FROM_FOLLOWERS', pair);
    const now = new Date();
    await collection(core.db, statuses).updateMany(
      { accountId: account._id, deletedAt: null },
      { $set: { deletedAt: now, updatedAt: now } },
    );
    await Promise.all([
      collection(core.db, favourites).deleteMany({ accountId: account._id }),
      deleteNotificationsFrom(core, account._id),
    ]);
    await coll.deleteOne({ _id: account._id });
  }
  return targets.length;
}
