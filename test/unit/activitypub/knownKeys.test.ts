// The process's cache of remote actors' keys (knownKeys.ts, on the shared TtlCache): a key just
// fetched serves without MongoDB, and forgetting its actor (an Update, a Delete, a rotated key)
// drops it, whether the actor is named by the key id or is the key's owner.
import type { Core } from '../../../services/core/context.ts';
import { findKnownKey, forgetKnownKeys, rememberKey } from '../../../services/core/activitypub/knownKeys.ts';

/** A core whose database knows no account, counting the lookups. */
function coreWithoutAccounts(): { core: Core; reads: () => number } {
  let reads = 0;
  const coll = {
    findOne: async () => {
      reads++;
      return null;
    },
  };
  return { core: { db: { collection: () => coll } } as unknown as Core, reads: () => reads };
}

test('a remembered key serves from the cache until its actor is forgotten', async () => {
  const { core, reads } = coreWithoutAccounts();
  const key = { publicKeyPem: 'PEM', owner: 'https://remote.example/users/a', domain: 'remote.example' };
  rememberKey('https://remote.example/users/a#main-key', key);
  await expect(findKnownKey(core, 'https://remote.example/users/a#main-key')).resolves.toEqual(key);
  expect(reads()).toBe(0);
  forgetKnownKeys('https://remote.example/users/a');
  await expect(findKnownKey(core, 'https://remote.example/users/a#main-key')).resolves.toBeNull();
  expect(reads()).toBeGreaterThan(0);
});

test('a key published in its own document is forgotten with its owner', async () => {
  const { core, reads } = coreWithoutAccounts();
  const key = { publicKeyPem: 'PEM2', owner: 'https://remote.example/users/b', domain: 'remote.example' };
  rememberKey('https://remote.example/keys/b', key);
  await expect(findKnownKey(core, 'https://remote.example/keys/b')).resolves.toEqual(key);
  forgetKnownKeys('https://remote.example/users/b');
  await expect(findKnownKey(core, 'https://remote.example/keys/b')).resolves.toBeNull();
  expect(reads()).toBe(2);
});
