// The Redis document cache (services/core/db/docCache.ts) never serves a copy older than the last
// write made through `collection()`, whatever the write's filter, and a fill that read MongoDB
// before a write cannot put its old copy back; the viewer's flags (interactions/viewerFlags.ts)
// follow favourites, bookmarks, boosts and pins as they change.
import { createTestCore, closeTestCore } from '../../support/core.ts';
import type { Core } from '../../../services/core/context.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { readThrough, writeThrough } from '../../../services/core/db/docCache.ts';
import { defineDerivedView, definePickView, defineViewOf } from '../../../services/core/db/docViews.ts';
import type { Collection } from 'mongodb';
import { accounts, accountView, type AccountDoc } from '../../../services/core/model/accounts.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { favouriteStatus, unfavouriteStatus, bookmarkStatus } from '../../../services/core/interactions/favourites.ts';
import { reblogStatus, unreblogStatus } from '../../../services/core/interactions/reblogs.ts';
import { pinStatus, unpinStatus } from '../../../services/core/interactions/pins.ts';
import { viewerMarks, viewerState } from '../../../services/core/interactions/viewerFlags.ts';
import { muteConversation, unmuteConversation } from '../../../services/core/interactions/conversationMutes.ts';

let t: { core: Core };
beforeAll(async () => {
  t = await createTestCore();
});
afterAll(async () => {
  await closeTestCore(t.core);
});

const nameView = defineDerivedView(accounts, 'test-name', ['privateKeyPem'], async (_core, docs) =>
  docs.map((d) => ({ name: d.displayName })),
);

async function cachedName(id: bigint): Promise<string | undefined> {
  return (await readThrough(t.core, nameView, [id])).get(id)?.name;
}

test('a cached document and a derived value follow every kind of write', async () => {
  const { account } = await createTestUser(t.core);
  const coll = collection(t.core.db, accounts);
  expect((await readThrough(t.core, accountView, [account._id])).get(account._id)?.displayName).toBe(
    account.displayName,
  );
  expect(await cachedName(account._id)).toBe(account.displayName);
  // The copies really come from Redis: a write that bypasses the wrapper is not seen...
  await t.core.db
    .collection<{ _id: bigint; displayName: string }>('accounts')
    .updateOne({ _id: account._id }, { $set: { displayName: 'bypassed' } });
  expect(await cachedName(account._id)).toBe(account.displayName);
  // ...while each write through collection() drops them, by _id or by any other filter.
  await coll.updateOne({ _id: account._id }, { $set: { displayName: 'one' } });
  expect(await cachedName(account._id)).toBe('one');
  await coll.updateMany({ usernameLower: account.usernameLower }, { $set: { displayName: 'two' } });
  expect(await cachedName(account._id)).toBe('two');
  expect((await readThrough(t.core, accountView, [account._id])).get(account._id)?.displayName).toBe('two');
  await coll.findOneAndUpdate({ uri: account.uri }, { $set: { displayName: 'three' } });
  expect(await cachedName(account._id)).toBe('three');
  await coll.deleteOne({ uri: account.uri });
  expect((await readThrough(t.core, accountView, [account._id])).has(account._id)).toBe(false);
});

const nameOfCopy = defineViewOf(accountView, 'test-name-of-copy', async (_core, docs) =>
  docs.map((d) => ({ name: d.displayName })),
);

test('a view over another cached view fills both from one MongoDB read, and a write drops both', async () => {
  const { account } = await createTestUser(t.core);
  const id = account._id;
  const raw = t.core.db.collection<{ _id: bigint; displayName: string }>('accounts');
  await collection(t.core.db, accounts).updateOne({ _id: id }, { $set: { displayName: 'first' } });
  expect((await readThrough(t.core, nameOfCopy, [id])).get(id)?.name).toBe('first');
  // Both copies are in Redis now: a write that bypasses the wrapper is seen by neither.
  await raw.updateOne({ _id: id }, { $set: { displayName: 'bypassed' } });
  expect((await readThrough(t.core, accountView, [id])).get(id)?.displayName).toBe('first');
  expect((await readThrough(t.core, nameOfCopy, [id])).get(id)?.name).toBe('first');
  // A write through collection() drops both; the derived view reads the base again (MongoDB, once).
  await collection(t.core.db, accounts).updateOne({ _id: id }, { $set: { displayName: 'second' } });
  expect((await readThrough(t.core, nameOfCopy, [id])).get(id)?.name).toBe('second');
  await raw.updateOne({ _id: id }, { $set: { displayName: 'bypassed again' } });
  expect((await readThrough(t.core, accountView, [id])).get(id)?.displayName).toBe('second');
  // An unknown id is absent from both.
  expect((await readThrough(t.core, nameOfCopy, [id + 1_000_000n])).size).toBe(0);
});

type NamedDoc = { _id: bigint; displayName: string };

test('a write through the cache replaces a view and the view it is made from', async () => {
  const { account } = await createTestUser(t.core);
  const id = account._id;
  const raw = t.core.db.collection<NamedDoc>('accounts');
  expect((await readThrough(t.core, nameOfCopy, [id])).get(id)?.name).toBe(account.displayName);
  await writeThrough(t.core, nameOfCopy, [id, id, id + 1_000_000n], {
    write: async (coll) => (await coll.updateOne({ _id: id }, { $set: { displayName: 'through' } })).acknowledged,
  });
  // Both copies were replaced in Redis: a write that bypasses the wrapper is seen by neither.
  await raw.updateOne({ _id: id }, { $set: { displayName: 'bypassed' } });
  expect((await readThrough(t.core, accountView, [id])).get(id)?.displayName).toBe('through');
  expect((await readThrough(t.core, nameOfCopy, [id])).get(id)?.name).toBe('through');
  // A write through collection() still drops what the write through stored.
  await collection(t.core.db, accounts).updateOne({ _id: id }, { $set: { displayName: 'written' } });
  expect((await readThrough(t.core, nameOfCopy, [id])).get(id)?.name).toBe('written');
});

test('a write through the cache keeps out a fill that read before it, and drops what another write changed meanwhile', async () => {
  const { account } = await createTestUser(t.core);
  const id = account._id;
  const key = `doc:accounts:{${id}}`;
  const generation = (await t.core.redis.get(`${key}:g`)) ?? '';
  await writeThrough(t.core, nameOfCopy, [id], {
    write: async (coll) => (await coll.updateOne({ _id: id }, { $set: { displayName: 'new' } })).acknowledged,
  });
  // A reader that noted the generation before the write cannot store what it read then.
  const staleFill = await t.core.redis.eval(
    `if (redis.call('GET', KEYS[2]) or '') ~= ARGV[2] then return 0 end redis.call('HSET', KEYS[1], 'test-name', ARGV[1]) return 1`,
    2,
    key,
    `${key}:g`,
    JSON.stringify({ name: account.displayName }),
    generation,
  );
  expect(staleFill).toBe(0);
  expect(await cachedName(id)).toBe('new');
  // Another write, dropping the copies after the generation was read (same connection, so in order):
  // the write through drops them too rather than storing a copy it cannot vouch for.
  await writeThrough(t.core, nameOfCopy, [id], {
    write: async (coll) => {
      await coll.updateOne({ _id: id }, { $set: { displayName: 'mine' } });
      await collection(t.core.db, accounts).updateOne({ _id: id }, { $set: { displayName: 'theirs' } });
      return true;
    },
    // Even a copy made from the one read beside the write is not stored.
    apply: (copy) => ({ ...copy, displayName: 'mine' }),
  });
  expect(await t.core.redis.exists(key)).toBe(0);
  expect((await readThrough(t.core, nameOfCopy, [id])).get(id)?.name).toBe('theirs');
});

test('a write through the cache that fails drops the copies and fails', async () => {
  const { account } = await createTestUser(t.core);
  const id = account._id;
  expect((await readThrough(t.core, nameOfCopy, [id])).get(id)?.name).toBe(account.displayName);
  await expect(
    writeThrough(t.core, nameOfCopy, [id], {
      write: async (coll) => {
        await coll.updateOne({ _id: id }, { $set: { displayName: 'half' } });
        throw new Error('second half failed');
      },
    }),
  ).rejects.toThrow('second half failed');
  expect(await t.core.redis.exists(`doc:accounts:{${id}}`)).toBe(0);
  expect((await readThrough(t.core, nameOfCopy, [id])).get(id)?.name).toBe('half');
});

test('a write through the cache makes the new copies from the cached ones when it can, else reads them', async () => {
  const one = await createTestUser(t.core);
  const other = await createTestUser(t.core);
  const ids = [one.account._id, other.account._id];
  const raw = t.core.db.collection<NamedDoc>('accounts');
  // Only the first account has a cached copy; the apply marks what it made from the copy.
  await readThrough(t.core, accountView, [ids[0]!]);
  const rename = (applied: boolean, name: string, fromCopy: string | null) => ({
    write: async (coll: Collection<AccountDoc>) => {
      await coll.updateMany({ _id: { $in: ids } }, { $set: { displayName: name } });
      return applied;
    },
    apply: (copy: AccountDoc) => (fromCopy === null ? null : { ...copy, displayName: fromCopy }),
  });
  const names = async () => {
    // Bypassing the wrapper: only what the write through stored is seen.
    await raw.updateMany({ _id: { $in: ids } }, { $set: { displayName: 'bypassed' } });
    return ids.map(async (id) => (await readThrough(t.core, nameOfCopy, [id])).get(id)?.name);
  };
  await writeThrough(t.core, nameOfCopy, ids, rename(true, 'written', 'from the copy'));
  expect(await Promise.all(await names())).toEqual(['from the copy', 'written']);
  // A write that did not change every document as said, or a copy the apply refuses: read again.
  await writeThrough(t.core, nameOfCopy, ids, rename(false, 'second', 'from the copy'));
  expect(await Promise.all(await names())).toEqual(['second', 'second']);
  await writeThrough(t.core, nameOfCopy, ids, rename(true, 'third', null));
  expect(await Promise.all(await names())).toEqual(['third', 'third']);
});

test('secrets stay out of the cached copy', async () => {
  const { account } = await createTestUser(t.core);
  await collection(t.core.db, accounts).updateOne({ _id: account._id }, { $set: { privateKeyPem: 'SECRET' } });
  const copy = (await readThrough(t.core, accountView, [account._id])).get(account._id) as Record<string, unknown>;
  expect(copy.username).toBe(account.username);
  expect('privateKeyPem' in copy).toBe(false);
  const raw = await t.core.redis.hgetallBuffer(`doc:accounts:{${account._id}}`);
  expect(Object.keys(raw)).toContain('a');
  expect(Buffer.concat(Object.values(raw)).includes('SECRET')).toBe(false);
});

test('a fill racing a write does not bring the old copy back', async () => {
  const { account } = await createTestUser(t.core);
  // The fill notes the document's generation and reads MongoDB, then a write happens, then the
  // fill stores what it read if the generation is unchanged (docCache.ts's FILL).
  const fill = (generation: string, name: string | undefined) =>
    t.core.redis.eval(
      `if (redis.call('GET', KEYS[2]) or '') ~= ARGV[2] then return 0 end redis.call('HSET', KEYS[1], 'test-name', ARGV[1]) return 1`,
      2,
      `doc:accounts:{${account._id}}`,
      `doc:accounts:{${account._id}}:g`,
      JSON.stringify({ name }),
      generation,
    );
  const generation = (await t.core.redis.get(`doc:accounts:{${account._id}}:g`)) ?? '';
  const before = await t.core.db
    .collection<{ _id: bigint; displayName: string }>('accounts')
    .findOne({ _id: account._id });
  await collection(t.core.db, accounts).updateOne({ _id: account._id }, { $set: { displayName: 'after' } });
  expect(await fill(generation, before?.displayName)).toBe(0);
  expect(await cachedName(account._id)).toBe('after');
  // A fill that began after the write stores at once (no waiting out a tombstone).
  const now = (await t.core.redis.get(`doc:accounts:{${account._id}}:g`)) ?? '';
  expect(now).not.toBe(generation);
  expect(await fill(now, 'after')).toBe(1);
});

// The same Redis copies, read with and without a process-local layer.
const namesInRedis = definePickView(accounts, 'test-local-name', ['displayName']);
const namesKept = definePickView(accounts, 'test-local-name', ['displayName'], { localTtlMs: 60_000 });

test('a process-local layer serves frozen copies without Redis, and a write of this process drops them', async () => {
  const { account } = await createTestUser(t.core);
  const id = account._id;
  const name = async () => (await readThrough(t.core, namesKept, [id])).get(id)?.displayName;
  await collection(t.core.db, accounts).updateOne({ _id: id }, { $set: { displayName: 'first' } });
  expect(await name()).toBe('first');
  // Gone from Redis and changed behind the cache's back: the process's copy still answers.
  await t.core.redis.del(`doc:accounts:{${id}}`);
  await t.core.db
    .collection<{ _id: bigint; displayName: string }>('accounts')
    .updateOne({ _id: id }, { $set: { displayName: 'bypassed' } });
  expect(await name()).toBe('first');
  expect(Object.isFrozen((await readThrough(t.core, namesKept, [id])).get(id))).toBe(true);
  await collection(t.core.db, accounts).updateOne({ _id: id }, { $set: { displayName: 'second' } });
  expect(await name()).toBe('second');
});

test('a read that began before a write of this process does not keep its old copy in the local layer', async () => {
  const { account } = await createTestUser(t.core);
  const id = account._id;
  const key = `doc:accounts:{${id}}`;
  await collection(t.core.db, accounts).updateOne({ _id: id }, { $set: { displayName: 'old' } });
  // Redis holds the old copy; this process's layer does not (read without it).
  expect((await readThrough(t.core, namesInRedis, [id])).get(id)?.displayName).toBe('old');
  // Redis busy for 300 ms (a script on the key's node): the read below waits for its answer
  // while the write (MongoDB, then the drops) goes ahead; the old copy comes back after the drop.
  const busy = t.core.redis.eval(
    `local s = redis.call('TIME') local e = s[1] * 1000000 + s[2] + 300000
     repeat local n = redis.call('TIME') until n[1] * 1000000 + n[2] >= e return 1`,
    1,
    key,
  );
  const read = readThrough(t.core, namesKept, [id]);
  const write = collection(t.core.db, accounts).updateOne({ _id: id }, { $set: { displayName: 'new' } });
  const [, raced] = await Promise.all([busy, read, write]);
  expect(raced.get(id)?.displayName).toBe('old');
  // Nothing read before the write is kept: the next read sees the write.
  expect((await readThrough(t.core, namesKept, [id])).get(id)?.displayName).toBe('new');
});

test("the viewer's flags follow favourites, bookmarks, boosts and pins", async () => {
  const alice = await createTestUser(t.core);
  const bob = await createTestUser(t.core);
  const post = await postStatus(t.core, bob.account, { text: 'flags', visibility: 'public' });
  const own = await postStatus(t.core, alice.account, { text: 'mine', visibility: 'public' });
  const doc = async (id: bigint) => (await collection(t.core.db, statuses).findOne({ _id: id }))!;
  const state = () => viewerState(t.core, alice.account._id, [post._id, own._id], []);
  expect(await state()).toMatchObject({ favourited: new Set(), reblogged: new Set(), pinned: new Set() });
  expect(await t.core.redis.hexists(`flags:{${alice.account._id}}`, ':')).toBe(1); // now cached

  await favouriteStatus(t.core, alice.account, await doc(post._id));
  await bookmarkStatus(t.core, alice.account, await doc(post._id));
  await t.core.redis.del(`flags:{${alice.account._id}}:t`);
  expect((await state()).favourited).toEqual(new Set([post._id]));
  expect((await state()).bookmarked).toEqual(new Set([post._id]));
  // One field per marked status, holding its marks' letters.
  expect(await t.core.redis.hget(`flags:{${alice.account._id}}`, String(post._id))).toBe('fb');

  await reblogStatus(t.core, alice.account, await doc(post._id), null);
  await pinStatus(t.core, alice.account, await doc(own._id));
  await t.core.redis.del(`flags:{${alice.account._id}}:t`);
  expect((await state()).reblogged).toEqual(new Set([post._id]));
  expect((await state()).pinned).toEqual(new Set([own._id]));

  await unfavouriteStatus(t.core, alice.account, await doc(post._id));
  await unreblogStatus(t.core, alice.account, await doc(post._id));
  await unpinStatus(t.core, alice.account, await doc(own._id));
  // Right after a change (tombstone standing) the flags come from MongoDB, and are right too.
  expect(await state()).toMatchObject({
    favourited: new Set(),
    reblogged: new Set(),
    pinned: new Set(),
    bookmarked: new Set([post._id]),
  });
});

test("a viewer's flags left as a set by the older layout are read from MongoDB and replaced", async () => {
  const alice = await createTestUser(t.core);
  const bob = await createTestUser(t.core);
  const post = await postStatus(t.core, bob.account, { text: 'old layout', visibility: 'public' });
  const doc = (await collection(t.core.db, statuses).findOne({ _id: post._id }))!;
  await favouriteStatus(t.core, alice.account, doc);
  const key = `flags:{${alice.account._id}}`;
  await t.core.redis.del(`${key}:t`);
  // What a process of the older layout fills: a member per mark (here a stale one: no favourite).
  await t.core.redis.sadd(key, ':', `b${post._id}`);
  const state = await viewerState(t.core, alice.account._id, [post._id], []);
  expect(state).toMatchObject({ favourited: new Set([post._id]), bookmarked: new Set() });
  expect(await t.core.redis.type(key)).toBe('hash');
  expect(await t.core.redis.hget(key, String(post._id))).toBe('f');
});

test("conversation mutes come from the viewer's flags hash, asked only of a viewer who has some", async () => {
  const alice = await createTestUser(t.core);
  const bob = await createTestUser(t.core);
  const post = await postStatus(t.core, bob.account, { text: 'a thread', visibility: 'public' });
  const doc = (await collection(t.core.db, statuses).findOne({ _id: post._id }))!;
  const conversation = doc.conversationId!;
  const muted = async () =>
    (await (await viewerMarks(t.core, alice.account._id, [post._id]))([conversation])).mutedConversations;
  expect(await muted()).toEqual(new Set());
  expect(await t.core.redis.hexists(`flags:{${alice.account._id}}`, 'M')).toBe(0);

  await muteConversation(t.core, alice.account, doc);
  await t.core.redis.del(`flags:{${alice.account._id}}:t`);
  expect(await muted()).toEqual(new Set([conversation]));
  expect(await t.core.redis.hexists(`flags:{${alice.account._id}}`, 'M')).toBe(1); // refilled with the mark
  expect(await muted()).toEqual(new Set([conversation])); // from the cached hash

  await unmuteConversation(t.core, alice.account, doc);
  await t.core.redis.del(`flags:{${alice.account._id}}:t`);
  expect(await muted()).toEqual(new Set());
  expect(await t.core.redis.hexists(`flags:{${alice.account._id}}`, 'M')).toBe(0);
});
