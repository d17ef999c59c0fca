// Account aliases and moves (Mastodon's AccountAlias, AccountMigration and MoveWorker): an alias
// names another account as this one's former self (`alsoKnownAs`), which a move to this account
// needs; moving redirects this account to the target (`movedTo`), tells followers' servers with a
// Move (planned by the delivery pipeline from the AccountUpdated event), and moves the followers on
// this server to the target (and carries local blocks and mutes of it over). Receiving a Move
// (ingress) does the same for the local followers of a remote account.
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { users, type UserDoc } from '../model/users.ts';
import { follows } from '../model/follows.ts';
import { accountMigrations, type AccountMigrationDoc } from '../model/accountMigrations.ts';
import type { NewEvent } from '../events/outbox.ts';
import { resolveAccountByAcct } from '../activitypub/resolve.ts';
import { resolveActor } from '../activitypub/actors.ts';
import { movedToAccount, parseAcct } from './queries.ts';
import { verifyPassword } from '../users/passwords.ts';
import { followAccount } from '../graph/follow.ts';
import { endFollow } from '../graph/unfollow.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { blockAccount } from '../graph/block.ts';
import { muteAccount } from '../graph/mute.ts';

/** Mastodon's cool-down between two moves. */
export const MIGRATION_COOLDOWN_MS = 30 * 86_400_000;
/** Aliases kept per account (Mastodon sets none; the actor document must stay small). */
export const ALIASES_MAX = 20;
/** Followers moved in one go on this server (the ingress side caps the same way). */
const MOVE_FOLLOWERS_MAX = 5000;

/** A refused alias or move; `key` is the message (Mastodon's `migrations.errors.*` and others). */
export class MigrationError extends Error {
  readonly key: string;
  readonly field: 'acct' | 'current_password' | 'base';
  constructor(field: 'acct' | 'current_password' | 'base', key: string) {
    super(key);
    this.field = field;
    this.key = key;
  }
}

async function accountByAcct(core: Core, acct: string): Promise<AccountDoc | null> {
  const parsed = parseAcct(core, acct);
  if (!parsed) return null;
  if (parsed.domain === null)
    return collection(core.db, accounts).findOne({ usernameLower: parsed.username.toLowerCase(), domain: null });
  return resolveAccountByAcct(core, acct);
}

function actorUpdated(account: AccountDoc, now: Date, changed: string[]): NewEvent<'AccountUpdated'> {
  return {
    type: 'AccountUpdated',
    key: String(account._id),
    payload: { accountId: String(account._id), username: account.username, domain: null, changed },
    verify: { collection: accounts.name, filter: { _id: account._id, updatedAt: now }, expect: 'exists' },
  };
}

/** The accounts behind the aliases, in order (an alias whose account is unknown shows its URI). */
export async function listAliases(
  core: Core,
  account: AccountDoc,
): Promise<Array<{ uri: string; account: AccountDoc | null }>> {
  const uris = account.alsoKnownAs ?? [];
  const found = await collection(core.db, accounts)
    .find({ uri: { $in: uris } })
    .toArray();
  return uris.map((uri) => ({ uri, account: found.find((a) => a.uri === uri) ?? null }));
}

export async function addAlias(core: Core, account: AccountDoc, acct: string): Promise<AccountDoc> {
  const text = acct.trim().replace(/^@/, '');
  if (!text) throw new MigrationError('acct', 'migrations.errors.blank');
  const target = await accountByAcct(core, text);
  if (!target) throw new MigrationError('acct', 'migrations.errors.not_found');
  if (target._id === account._id) throw new MigrationError('acct', 'migrations.errors.move_to_self');
  const current = account.alsoKnownAs ?? [];
  if (current.includes(target.uri)) throw new MigrationError('acct', 'migrations.errors.already_alias');
  if (current.length >= ALIASES_MAX) throw new MigrationError('acct', 'migrations.errors.too_many_aliases');
  return setAliases(core, account, [...current, target.uri]);
}

export async function removeAlias(core: Core, account: AccountDoc, uri: string): Promise<AccountDoc> {
  const current = account.alsoKnownAs ?? [];
  if (!current.includes(uri)) return account;
  return setAliases(
    core,
    account,
    current.filter((u) => u !== uri),
  );
}

async function setAliases(core: Core, account: AccountDoc, aliases: string[]): Promise<AccountDoc> {
  const now = new Date();
  await core.outbox.write([actorUpdated(account, now, ['also_known_as'])], () =>
    collection(core.db, accounts).updateOne({ _id: account._id }, { $set: { alsoKnownAs: aliases, updatedAt: now } }),
  );
  return { ...account, alsoKnownAs: aliases, updatedAt: now };
}

export async function lastMigration(core: Core, account: AccountDoc): Promise<AccountMigrationDoc | null> {
  return collection(core.db, accountMigrations).findOne({ accountId: account._id }, { sort: { _id: -1 } });
}

/** The account's last moves, newest first, and the account it redirects to now (the migration page). */
export async function migrationHistory(
  core: Core,
  account: AccountDoc,
  limit = 10,
): Promise<{ past: AccountMigrationDoc[]; movedTo: AccountDoc | null }> {
  const [past, movedTo] = await Promise.all([
    collection(core.db, accountMigrations).find({ accountId: account._id }).sort({ _id: -1 }).limit(limit).toArray(),
    movedToAccount(core, account),
  ]);
  return { past, movedTo };
}

/** When the next move is allowed, or null when it is allowed now. */
export async function migrationCooldownUntil(core: Core, account: AccountDoc, now = new Date()): Promise<Date | null> {
  const last = await lastMigration(core, account);
  if (!last) return null;
  const until = new Date(last.createdAt.getTime() + MIGRATION_COOLDOWN_MS);
  return until > now ? until : null;
}

/**
 * Moves `account` to the account named by `acct` (POST /settings/migration): the password, the
 * cool-down and the target's alias back to this account are checked first, as Mastodon does.
 */
export async function moveAccount(
  core: Core,
  account: AccountDoc,
  user: UserDoc,
  input: { acct: string; password: string },
): Promise<AccountDoc> {
  const text = input.acct.trim().replace(/^@/, '');
  if (!text) throw new MigrationError('acct', 'migrations.errors.blank');
  const stored = await collection(core.db, users).findOne({ _id: user._id }, { projection: { passwordHash: 1 } });
  if (!stored || !(await verifyPassword(stored.passwordHash, input.password)))
    throw new MigrationError('current_password', 'migrations.errors.invalid_password');
  if (await migrationCooldownUntil(core, account)) throw new MigrationError('base', 'migrations.errors.on_cooldown');
  let target = await accountByAcct(core, text);
  if (!target) throw new MigrationError('acct', 'migrations.errors.not_found');
  if (target._id === account._id) throw new MigrationError('acct', 'migrations.errors.move_to_self');
  if (account.movedToAccountId === target._id) throw new MigrationError('acct', 'migrations.errors.already_moved');
  // The target's aliases as its server publishes them now (a remote actor is fetched again).
  if (target.domain !== null) target = (await resolveActor(core, target.uri, { refresh: true })) ?? target;
  if (!(target.alsoKnownAs ?? []).includes(account.uri))
    throw new MigrationError('acct', 'migrations.errors.missing_also_known_as');
  if (target.suspendedAt || target.movedToAccountId) throw new MigrationError('acct', 'migrations.errors.not_found');

  const now = new Date();
  await collection(core.db, accountMigrations).insertOne({
    _id: await nextSerialId(core.db, 'account_migrations'),
    accountId: account._id,
    targetAccountId: target._id,
    acct: text,
    targetUri: target.uri,
    followersCount: account.followersCount,
    createdAt: now,
  });
  // One event: the delivery planner sends the actor's Update (now with movedTo) and the Move.
  await core.outbox.write([actorUpdated(account, now, ['moved_to'])], () =>
    collection(core.db, accounts).updateOne(
      { _id: account._id },
      { $set: { movedToAccountId: target._id, updatedAt: now } },
    ),
  );
  const moved = { ...account, movedToAccountId: target._id, updatedAt: now };
  await moveLocalFollowers(core, moved, target);
  return moved;
}

/**
 * The followers on this server of `from` follow `to` instead, with the same options (MoveWorker /
 * UnfollowFollowWorker); one that cannot (blocked, say) keeps following `from`.
 */
export async function moveLocalFollowers(core: Core, from: AccountDoc, to: AccountDoc): Promise<number> {
  const localFollowers = await collection(core.db, follows)
    .find({ targetAccountId: from._id }, { projection: { accountId: 1, showReblogs: 1, notify: 1, languages: 1 } })
    .limit(MOVE_FOLLOWERS_MAX)
    .toArray();
  const local = await collection(core.db, accounts)
    .find({ _id: { $in: localFollowers.map((f) => f.accountId) }, domain: null })
    .toArray();
  let moved = 0;
  for (const follower of local) {
    if (follower._id === to._id) continue;
    const f = localFollowers.find((x) => x.accountId === follower._id);
    try {
      await followAccount(core, follower, to, { reblogs: f?.showReblogs, notify: f?.notify, languages: f?.languages });
      await endFollow(core, follower, from, 'UNFOLLOW', follower);
      moved++;
    } catch (err) {
      core.logger.info({ err, follower: String(follower._id) }, 'move: a follower could not follow the new account');
    }
  }
  await carryBlocksAndMutes(core, from, to);
  return moved;
}

/** Local users who block or mute `from` block or mute `to` too (MoveWorker#carry_blocks_over!, carry_mutes_over!). */
async function carryBlocksAndMutes(core: Core, from: AccountDoc, to: AccountDoc): Promise<void> {
  const localOf = async (ids: bigint[]) =>
    collection(core.db, accounts)
      .find({ _id: { $in: ids }, domain: null })
      .toArray();
  const blockers = await collection(core.db, blocks)
    .find({ targetAccountId: from._id })
    .limit(MOVE_FOLLOWERS_MAX)
    .toArray();
  for (const blocker of await localOf(blockers.map((b) => b.accountId)))
    if (blocker._id !== to._id) await blockAccount(core, blocker, to).catch(() => undefined);
  const muters = await collection(core.db, mutes)
    .find({ targetAccountId: from._id, expiresAt: null })
    .limit(MOVE_FOLLOWERS_MAX)
    .toArray();
  for (const muter of await localOf(muters.map((m) => m.accountId))) {
    if (muter._id === to._id) continue;
    const mute = muters.find((m) => m.accountId === muter._id);
    await muteAccount(core, muter, to, { notifications: mute?.hideNotifications ?? true }).catch(() => undefined);
  }
}
