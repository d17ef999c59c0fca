// Documents of the shapes in services/core/model for the benchmarks' data sets: accounts (every
// fifth local), statuses with a hashtag, ids time-based like the real ones.
import type { Id } from '../../services/core/ids.ts';
import type { AccountDoc } from '../../services/core/model/accounts.ts';
import type { StatusDoc } from '../../services/core/model/statuses.ts';

export const T0 = Date.UTC(2026, 0, 1);
export const statusId = (i: number): Id => (BigInt(T0 + i * 7) << 16n) | BigInt(i & 0xffff);

export function accountDoc(i: number): AccountDoc {
  const username = `user${i}`;
  const url = `https://bench.example/@${username}`;
  return {
    _id: BigInt(i + 1),
    username,
    usernameLower: username,
    domain: i % 5 === 0 ? null : `remote${i % 997}.example`,
    displayName: `User ${i}`,
    note: '<p>A benchmark account with a short biography of average length.</p>',
    noteSource: 'A benchmark account with a short biography of average length.',
    fields: [],
    fieldsSource: [],
    avatar: null,
    header: null,
    locked: false,
    bot: false,
    group: false,
    discoverable: true,
    indexable: true,
    hideCollections: false,
    uri: `https://bench.example/users/${username}`,
    url,
    inboxUrl: `https://bench.example/users/${username}/inbox`,
    outboxUrl: `https://bench.example/users/${username}/outbox`,
    sharedInboxUrl: 'https://bench.example/inbox',
    followersUrl: `https://bench.example/users/${username}/followers`,
    publicKeyPem:
      '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n',
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
    createdAt: new Date(T0),
    updatedAt: new Date(T0),
  };
}

export function statusDoc(i: number, accountIndex: number, inReplyTo: { id: Id; accountId: Id } | null): StatusDoc {
  const id = statusId(i);
  const text = `Benchmark post number ${i} with a #hashtag and some words to make it a realistic length.`;
  return {
    _id: id,
    accountId: BigInt(accountIndex + 1),
    uri: `https://bench.example/users/user${accountIndex}/statuses/${id}`,
    url: `https://bench.example/@user${accountIndex}/${id}`,
    local: accountIndex % 5 === 0,
    text,
    content: `<p>${text}</p>`,
    spoilerText: '',
    sensitive: false,
    language: 'en',
    visibility: 'public',
    inReplyToId: inReplyTo?.id ?? null,
    inReplyToAccountId: inReplyTo?.accountId ?? null,
    reblogOfId: null,
    reblogOfAccountId: null,
    conversationId: null,
    mentions: [],
    mentionedAccountIds: [],
    tags: [{ id: 1n, name: 'hashtag' }],
    tagNames: ['hashtag'],
    mediaIds: [],
    pollId: null,
    applicationId: null,
    repliesCount: 0,
    reblogsCount: 0,
    favouritesCount: 0,
    uniqueKey: `s:${id}`,
    createdAt: new Date(T0 + i * 7),
    updatedAt: new Date(T0 + i * 7),
    editedAt: null,
    deletedAt: null,
  };
}
