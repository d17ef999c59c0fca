// Collections (Mastodon 4.6) as the masto client library uses them, run as its own Node process
// (masto is an ES module): the flow of masto.js's own collections spec. Prints one JSON line.
// Usage: node mastoCollectionsFlow.ts <baseUrl> <token> <accountId>
import { createRestAPIClient } from 'masto';

const [url, token, accountId] = process.argv.slice(2) as [string, string, string];
const alice = createRestAPIClient({ url, accessToken: token });

const created = await alice.v1.collections.create({ name: 'My collection', sensitive: false, discoverable: true });
const fetched = await alice.v1.collections.$select(created.collection.id).fetch();
const updated = await alice.v1.collections.$select(created.collection.id).update({ name: 'My collection 2' });
const listed = await alice.v1.accounts.$select(accountId).collections.list();
const inCollections = await alice.v1.accounts.$select(accountId).inCollections.list();
await alice.v1.collections.$select(created.collection.id).remove();
const afterRemove = await alice.v1.accounts.$select(accountId).collections.list();

console.log(
  JSON.stringify({
    createdName: created.collection.name,
    fetchedName: fetched.collection.name,
    fetchedAccounts: fetched.accounts.map((a) => a.id),
    updated: updated.collection,
    listed: listed.collections,
    inCollections: inCollections.collections,
    afterRemove: afterRemove.collections,
  }),
);
