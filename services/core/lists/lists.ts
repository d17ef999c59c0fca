// Lists (Mastodon's List and ListAccount): a user's lists of accounts they follow, with a replies
// policy and an `exclusive` flag. Members must be followed; unfollowing removes them.
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { markFanOutFilters } from '../feeds/fanOutFilters.ts';
import type { AccountDoc, CachedAccount } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { listMembers, lists, REPLIES_POLICIES, type ListDoc, type RepliesPolicy } from '../model/lists.ts';
import { notFound, validationFailed } from '../errors.ts';
import type { NewEvent } from '../events/outbox.ts';

export interface ListInput {
  title?: string;
  repliesPolicy?: string;
  exclusive?: boolean;
}

const TITLE_MAX = 256;

function validTitle(title: string | undefined): string {
  const t = (title ?? '').trim();
  if (!t) throw validationFailed("Title can't be blank");
  if ([...t].length > TITLE_MAX) throw validationFailed(`Title is too long (maximum is ${TITLE_MAX} characters)`);
  return t;
}

function validPolicy(policy: string | undefined, fallback: RepliesPolicy): RepliesPolicy {
  if (policy === undefined || policy === '') return fallback;
  if (!(REPLIES_POLICIES as readonly string[]).includes(policy))
    throw validationFailed('Replies policy is not included in the list');
  return policy as RepliesPolicy;
}

export async function ownList(core: Core, owner: CachedAccount, listId: Id | null): Promise<ListDoc> {
  const list = listId === null ? null : await collection(core.db, lists).findOne({ _id: listId, accountId: owner._id });
  if (!list) throw notFound();
  return list;
}

export async function createList(core: Core, owner: AccountDoc, input: ListInput): Promise<ListDoc> {
  const list: ListDoc = {
    _id: await nextSerialId(core.db, 'lists'),
    accountId: owner._id,
    title: validTitle(input.title),
    repliesPolicy: validPolicy(input.repliesPolicy, 'list'),
    exclusive: input.exclusive ?? false,
    createdAt: new Date(),
  };
  await core.outbox.write([listEvent('ListCreated', list)], () => collection(core.db, lists).insertOne(list));
  return list;
}

/** ListCreated/ListUpdated carry the list's whole settings, so a list-feed consumer needs no read back. */
function listEvent<T extends 'ListCreated' | 'ListUpdated'>(type: T, list: ListDoc): NewEvent<T> {
  return {
    type,
    key: String(list.accountId),
    payload: {
      listId: String(list._id),
      ownerId: String(list.accountId),
      title: list.title,
      repliesPolicy: list.repliesPolicy,
      exclusive: list.exclusive,
    },
    verify: {
      collection: lists.name,
      filter: { _id: list._id, title: list.title, repliesPolicy: list.repliesPolicy, exclusive: list.exclusive },
      expect: 'exists',
    },
  } as NewEvent<T>;
}

export async function updateList(core: Core, list: ListDoc, input: ListInput): Promise<ListDoc> {
  const set: Partial<ListDoc> = {};
  if (input.title !== undefined) set.title = validTitle(input.title);
  if (input.repliesPolicy !== undefined) set.repliesPolicy = validPolicy(input.repliesPolicy, list.repliesPolicy);
  if (input.exclusive !== undefined) set.exclusive = input.exclusive;
  const updated: ListDoc = { ...list, ...set };
  if (Object.keys(set).length === 0) return updated;
  await core.outbox.write([listEvent('ListUpdated', updated)], () =>
    collection(core.db, lists).updateOne({ _id: list._id }, { $set: set }),
  );
  return updated;
}

export async function deleteList(core: Core, list: ListDoc): Promise<void> {
  const event: NewEvent<'ListDeleted'> = {
    type: 'ListDeleted',
    key: String(list.accountId),
    payload: { listId: String(list._id), ownerId: String(list.accountId) },
    verify: { collection: lists.name, filter: { _id: list._id }, expect: 'absent' },
  };
  await core.outbox.write([event], async () => {
    await collection(core.db, lists).deleteOne({ _id: list._id });
    await collection(core.db, listMembers).deleteMany({ listId: list._id });
  });
}

function membersChanged(
  list: Pick<ListDoc, '_id' | 'accountId'>,
  ids: Id[],
  added: boolean,
  verifyId: Id,
): NewEvent<'ListMembersChanged'> {
  return {
    type: 'ListMembersChanged',
    key: String(list.accountId),
    payload: { listId: String(list._id), ownerId: String(list.accountId), accountIds: ids.map(String), added },
    verify: {
      collection: listMembers.name,
      filter: { listId: list._id, accountId: verifyId },
      expect: added ? 'exists' : 'absent',
    },
  };
}

/** Adds accounts the owner follows (422 for any other, as Mastodon). */
export async function addListMembers(core: Core, list: ListDoc, accountIds: Id[]): Promise<void> {
  const ids = [...new Set(accountIds)];
  if (ids.length === 0) return;
  const followed = new Set(
    (
      await collection(core.db, follows)
        .find({ accountId: list.accountId, targetAccountId: { $in: ids } }, { projection: { targetAccountId: 1 } })
        .toArray()
    ).map((f) => f.targetAccountId),
  );
  if (ids.some((id) => !followed.has(id))) throw validationFailed('Account has not been followed');
  const present = new Set(
    (
      await collection(core.db, listMembers)
        .find({ listId: list._id, accountId: { $in: ids } }, { projection: { accountId: 1 } })
        .toArray()
    ).map((m) => m.accountId),
  );
  const fresh = ids.filter((id) => !present.has(id));
  if (fresh.length === 0) return;
  const docs = await Promise.all(
    fresh.map(async (accountId) => ({
      _id: await nextSerialId(core.db, 'list_accounts'),
      listId: list._id,
      ownerId: list.accountId,
      accountId,
      createdAt: new Date(),
    })),
  );
  await markFanOutFilters(core, fresh);
  await core.outbox.write([membersChanged(list, fresh, true, fresh[0] as Id)], async () => {
    await collection(core.db, listMembers)
      .insertMany(docs, { ordered: false })
      .catch((err: unknown) => {
        if (!isDuplicateKeyError(err)) throw err;
      });
  });
}

export async function removeListMembers(
  core: Core,
  list: Pick<ListDoc, '_id' | 'accountId'>,
  accountIds: Id[],
): Promise<void> {
  const ids = [...new Set(accountIds)];
  const present = (
    await collection(core.db, listMembers)
      .find({ listId: list._id, accountId: { $in: ids } }, { projection: { accountId: 1 } })
      .toArray()
  ).map((m) => m.accountId);
  if (present.length === 0) return;
  await core.outbox.write([membersChanged(list, present, false, present[0] as Id)], () =>
    collection(core.db, listMembers).deleteMany({ listId: list._id, accountId: { $in: present } }),
  );
}

/** An unfollowed account leaves every list of the account that stopped following it. */
export async function removeAccountFromOwnerLists(core: Core, ownerId: Id, accountId: Id): Promise<void> {
  const memberships = await collection(core.db, listMembers).find({ ownerId, accountId }).toArray();
  for (const m of memberships) await removeListMembers(core, { _id: m.listId, accountId: ownerId }, [accountId]);
}
