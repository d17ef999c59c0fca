// Remote accounts and statuses as the ingress would store them, written straight to MongoDB, for
// tests of outbound federation against a local inbox sink (test/support/inboxSink.ts).
import type { Core } from '../../services/core/context.ts';
import { nextSerialId } from '../../services/core/ids.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts, type AccountDoc } from '../../services/core/model/accounts.ts';
import { statuses, postUniqueKey, type StatusDoc } from '../../services/core/model/statuses.ts';
import { generateActorKeyPair } from '../../services/core/accounts/keys.ts';

let sharedKey: Promise<{ publicKeyPem: string }> | null = null;

/**
 * A remote account whose server answers at `base` (e.g. http://127.0.0.1:PORT); `sharedInbox` false:
 * personal inbox only; `domain` its handle's domain (default: the host of `base`).
 */
export async function createRemoteAccount(
  core: Core,
  base: string,
  username: string,
  opts: { sharedInbox?: boolean; domain?: string } = {},
): Promise<AccountDoc> {
  sharedKey ??= generateActorKeyPair();
  // The account's domain may differ from where its server answers (a test server on a port).
  const host = opts.domain ?? new URL(base).host;
  const uri = `${base}/users/${username}`;
  const now = new Date();
  const doc: AccountDoc = {
    _id: await nextSerialId(core.db, 'accounts'),
    username,
    usernameLower: username.toLowerCase(),
    domain: host,
    displayName: username,
    note: '',
    noteSource: '',
    fields: [],
    fieldsSource: [],
    avatar: null,
    header: null,
    locked: false,
    bot: false,
    group: false,
    discoverable: false,
    indexable: false,
    hideCollections: false,
    uri,
    url: `${base}/@${username}`,
    inboxUrl: `${uri}/inbox`,
    outboxUrl: `${uri}/outbox`,
    sharedInboxUrl: opts.sharedInbox === false ? null : `${base}/inbox`,
    followersUrl: `${uri}/followers`,
    publicKeyPem: (await sharedKey).publicKeyPem,
    privateKeyPem: null,
    followersCount: 0,
    followingCount: 0,
    statusesCount: 0,
    lastStatusAt: null,
    suspendedAt: null,
    silencedAt: null,
    memorial: false,
    pendingUser: false,
    movedToAccountId: null,
    createdAt: now,
    updatedAt: now,
  };
  await collection(core.db, accounts).insertOne(doc);
  return doc;
}

/** A public status of a remote account. */
export async function createRemoteStatus(core: Core, author: AccountDoc, text = 'remote post'): Promise<StatusDoc> {
  const id = await core.statusIds.next();
  const now = new Date();
  const doc: StatusDoc = {
    _id: id,
    accountId: author._id,
    uri: `${author.uri}/statuses/${id}`,
    url: `${author.url}/${id}`,
    local: false,
    text: '',
    content: `<p>${text}</p>`,
    spoilerText: '',
    sensitive: false,
    language: 'en',
    visibility: 'public',
    inReplyToId: null,
    inReplyToAccountId: null,
    reblogOfId: null,
    reblogOfAccountId: null,
    conversationId: null,
    mentions: [],
    mentionedAccountIds: [],
    tags: [],
    tagNames: [],
    mediaIds: [],
    pollId: null,
    applicationId: null,
    repliesCount: 0,
    reblogsCount: 0,
    favouritesCount: 0,
    uniqueKey: postUniqueKey(id),
    createdAt: now,
    updatedAt: now,
    editedAt: null,
    deletedAt: null,
  };
  await collection(core.db, statuses).insertOne(doc);
  return doc;
}

/** Key resolver for the inbox sink: any account this core knows (local keys for our signatures). */
export function keysFrom(core: Core) {
  return async (keyId: string) => {
    const actor = keyId.replace(/#.*$/, '');
    if (actor === `${core.config.baseUrl}/actor`) {
      const { instanceActorKeys } = await import('../../services/core/activitypub/keys.ts');
      return { publicKeyPem: (await instanceActorKeys(core)).publicKeyPem, owner: actor };
    }
    const account = await collection(core.db, accounts).findOne({ uri: actor });
    return account ? { publicKeyPem: account.publicKeyPem, owner: account.uri } : null;
  };
}
