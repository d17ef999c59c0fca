// A synthetic stream of trend events with a known outcome, for the trends test and benchmark:
// accounts, a few statuses and preview cards in MongoDB, then `StatusCreated` / `ReblogCreated` /
// `FavouriteCreated` events (OutboxEvent records for the real Kafka sink) whose unique accounts
// per hashtag, status and link are chosen so the ranking is known in advance. Repeated uses by the
// same accounts and private posts are mixed in: they must not change it.
import { randomUUID } from 'node:crypto';
import type { Core } from '../../services/core/context.ts';
import type { Id } from '../../services/core/ids.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { statuses } from '../../services/core/model/statuses.ts';
import { previewCardProviders, previewCards, statusCards } from '../../services/core/model/previewCards.ts';
import type { OutboxEvent } from '../../services/core/events/outbox.ts';
import { accountDoc, statusDoc } from '../bench/dataSet.ts';

const HOUR = 3_600_000;
const ACCOUNT_BASE = 5_000_000;

export interface TrendStream {
  /** The moment the refresh should score at (noon UTC of the current day). */
  atMs: number;
  events: OutboxEvent[];
  /** Expected rankings (tag names, status ids, card ids), best first. */
  expected: { tags: string[]; tagsForGerman: string[]; statuses: string[]; links: string[] };
  /** Items that must not trend. */
  notTrending: { tags: string[]; statuses: string[]; links: string[] };
  cards: { trending: Id; below: Id };
}

const accountId = (i: number): string => String(BigInt(ACCOUNT_BASE + i + 1));
let seq = 0;
const newStatusId = (ms: number): Id => (BigInt(ms) << 16n) | BigInt(seq++ & 0xffff);

/** Builds the data and the events; `total` pads the stream with neutral repeats up to that size. */
export async function buildTrendStream(core: Core, total = 50_000): Promise<TrendStream> {
  const now = Date.now();
  const atMs = Math.floor(now / 86_400_000) * 86_400_000 + 12 * HOUR;
  const yesterday = atMs - 24 * HOUR;
  const events: OutboxEvent[] = [];

  const ACCOUNTS = 2_000;
  const docs = Array.from({ length: ACCOUNTS }, (_, i) => ({
    ...accountDoc(ACCOUNT_BASE + i),
    _id: BigInt(accountId(i)),
  }));
  for (let i = 0; i < docs.length; i += 500) await collection(core.db, accounts).insertMany(docs.slice(i, i + 500));

  const statusCreated = (i: number, tag: string, atTime: number, language: string, visibility = 'public') => {
    const id = newStatusId(atTime);
    events.push({
      eventId: randomUUID(),
      type: 'StatusCreated',
      key: accountId(i),
      occurredAt: new Date(atTime),
      payload: {
        statusId: String(id),
        accountId: accountId(i),
        uri: `https://bench.example/statuses/${id}`,
        local: false,
        visibility,
        inReplyToId: null,
        inReplyToAccountId: null,
        conversationId: null,
        mentionedAccountIds: [],
        tagNames: [tag],
        language,
        sensitive: false,
        hasMedia: false,
        hasPoll: false,
        applicationId: null,
        createdAt: new Date(atTime),
      },
    });
  };
  const tagUses = (tag: string, accountsFrom: number, n: number, each: number, atTime: number, language: string) => {
    for (let r = 0; r < each; r++)
      for (let a = 0; a < n; a++) statusCreated(accountsFrom + a, tag, atTime - r * 1000, language);
  };
  // alpha: 600 accounts today against 20 yesterday; beta (German): 300 against 10; gamma: fewer
  // today than yesterday; delta: under the threshold of 5 accounts.
  tagUses('alpha', 0, 600, 20, atMs - HOUR, 'en');
  tagUses('alpha', 1000, 20, 1, yesterday, 'en');
  tagUses('beta', 100, 300, 20, atMs - HOUR, 'de');
  tagUses('beta', 1200, 10, 1, yesterday, 'de');
  tagUses('gamma', 0, 150, 10, atMs - HOUR, 'en');
  tagUses('gamma', 500, 200, 1, yesterday, 'en');
  tagUses('delta', 0, 4, 50, atMs - HOUR, 'en');
  // zeta only in private posts: never counted.
  for (let r = 0; r < 5; r++) for (let a = 0; a < 1000; a++) statusCreated(a, 'zeta', atMs - HOUR, 'en', 'private');

  // Statuses that collect interactions (the authors are discoverable accounts of the data set).
  const originals = [30, 20, 10, 5, 4].map((minutes, k) => ({
    ...statusDoc(0, ACCOUNT_BASE + k, null),
    _id: newStatusId(atMs - minutes * 60_000),
    accountId: BigInt(accountId(k)),
    createdAt: new Date(atMs - minutes * 60_000),
  }));
  for (const s of originals) s.uniqueKey = `s:${s._id}`;
  for (const s of originals) s.uri = `https://bench.example/statuses/${s._id}`;
  await collection(core.db, statuses).insertMany(originals);
  const [s1, s2, s3, s4, s5] = originals as [
    (typeof originals)[0],
    (typeof originals)[0],
    (typeof originals)[0],
    (typeof originals)[0],
    (typeof originals)[0],
  ];
  const now2 = new Date();
  const cards = await collection(core.db, previewCards).insertMany([
    {
      _id: 9_000_001n,
      url: 'https://news.example/a',
      title: 'A story',
      description: '',
      type: 'link',
      authorName: '',
      authorUrl: '',
      providerName: 'News',
      providerUrl: '',
      html: '',
      width: 0,
      height: 0,
      image: null,
      embedUrl: '',
      language: 'en',
      publishedAt: null,
      createdAt: now2,
      updatedAt: now2,
    },
    {
      _id: 9_000_002n,
      url: 'https://news.example/b',
      title: 'B story',
      description: '',
      type: 'link',
      authorName: '',
      authorUrl: '',
      providerName: 'News',
      providerUrl: '',
      html: '',
      width: 0,
      height: 0,
      image: null,
      embedUrl: '',
      language: 'en',
      publishedAt: null,
      createdAt: now2,
      updatedAt: now2,
    },
  ]);
  void cards;
  await collection(core.db, previewCardProviders).insertOne({
    _id: 9_100_001n,
    domain: 'news.example',
    createdAt: now2,
  });
  await collection(core.db, statusCards).insertMany([
    { _id: s4._id, cardId: 9_000_001n, createdAt: now2 },
    { _id: s5._id, cardId: 9_000_002n, createdAt: now2 },
  ]);

  const favourite = (i: number, s: (typeof originals)[0], atTime: number) =>
    events.push({
      eventId: randomUUID(),
      type: 'FavouriteCreated',
      key: accountId(i),
      occurredAt: new Date(atTime),
      payload: {
        favouriteId: String(events.length + 1),
        accountId: accountId(i),
        statusId: String(s._id),
        statusAccountId: String(s.accountId),
        createdAt: new Date(atTime),
      },
    });
  const reblog = (i: number, s: (typeof originals)[0], atTime: number) => {
    const id = newStatusId(atTime);
    events.push({
      eventId: randomUUID(),
      type: 'ReblogCreated',
      key: accountId(i),
      occurredAt: new Date(atTime),
      payload: {
        statusId: String(id),
        accountId: accountId(i),
        uri: `https://bench.example/statuses/${id}/activity`,
        local: false,
        visibility: 'public',
        reblogOfId: String(s._id),
        reblogOfAccountId: String(s.accountId),
        createdAt: new Date(atTime),
      },
    });
  };
  const t = atMs - 60_000;
  for (let a = 0; a < 500; a++) {
    favourite(a, s1, t);
    reblog(a, s1, t);
  }
  for (let r = 0; r < 4; r++) for (let a = 0; a < 250; a++) favourite(600 + a, s2, t);
  for (let r = 0; r < 10; r++) for (let a = 0; a < 3; a++) favourite(a, s3, t);
  for (let r = 0; r < 5; r++) for (let a = 0; a < 40; a++) reblog(900 + a, s4, t);
  for (let r = 0; r < 5; r++) for (let a = 0; a < 10; a++) reblog(950 + a, s5, t);
  // Padding: the same accounts again (changes no unique count).
  for (let k = 0; events.length < total; k++) {
    if (k % 2 === 0) favourite(k % 500, s1, t);
    else favourite(k % 3, s3, t);
  }
  return {
    atMs,
    events,
    expected: {
      tags: ['alpha', 'beta'],
      tagsForGerman: ['beta', 'alpha'],
      statuses: [s1, s2, s4, s5].map((s) => String(s._id)),
      links: ['9000001'],
    },
    notTrending: { tags: ['gamma', 'delta', 'zeta'], statuses: [String(s3._id)], links: ['9000002'] },
    cards: { trending: 9_000_001n, below: 9_000_002n },
  };
}
