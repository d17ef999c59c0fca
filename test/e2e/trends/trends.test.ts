// Trends end to end: a synthetic stream of 50,000 interaction events goes over the real Kafka
// topics through the trends pipeline; the refresh then ranks hashtags, statuses and links as
// Mastodon's formulas say, nothing shows before review, moderators approve and reject through the
// admin API (others get 403), the caller's language comes first, offset pagination works, a review
// notice e-mail goes out once per two hours, and tag history counts uses and accounts per day.
import type { Core } from '../../../services/core/context.ts';
import { runTrendsPipeline } from '../../../pipelines/trends/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { createKafkaEventSink, type KafkaEventSink } from '../../../services/core/events/kafkaSink.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { users } from '../../../services/core/model/users.ts';
import { tags } from '../../../services/core/model/tags.ts';
import { trendReviews } from '../../../services/core/model/trends.ts';
import { refreshTrends } from '../../../services/core/trends/refresh.ts';
import { setAutoApprove } from '../../../services/core/trends/review.ts';
import { findOrCreateTag } from '../../../services/core/statuses/entities.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { requester } from '../../support/http.ts';
import { buildTrendStream, type TrendStream } from '../../support/trendStream.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let sink: KafkaEventSink;
let stream: TrendStream;
let moderator: TestUser, reader: TestUser, german: TestUser;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);
const names = async (path: string, token?: string) =>
  ((await call('GET', path, token)).body as { name: string }[]).map((t) => t.name);
const ids = async (path: string, token?: string) =>
  ((await call('GET', path, token)).body as { id: string }[]).map((t) => t.id);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  [moderator, reader, german] = await Promise.all([
    createTestUser(core, { role: 'Moderator', scopes: ['read', 'write', 'admin:read', 'admin:write'] }),
    createTestUser(core, { scopes: ['read', 'write', 'admin:read', 'admin:write'] }),
    createTestUser(core),
  ]);
  await collection(core.db, users).updateOne({ _id: german.user._id }, { $set: { locale: 'de' } });
  for (const name of ['alpha', 'beta', 'gamma', 'delta', 'zeta']) await findOrCreateTag(core, name);
  stream = await buildTrendStream(core, 50_000);
  expect(stream.events).toHaveLength(50_000);
  sink = await createKafkaEventSink(core.config, core.logger, { createTopics: false });
  pipeline = await runTrendsPipeline(core, { ...consumerTuning, refreshIntervalMs: 0 });
  const started = Date.now();
  for (let i = 0; i < stream.events.length; i += 2_000) await sink.publish(stream.events.slice(i, i + 2_000));
  await eventually(async () => (await pipeline.lag()) === 0, 120_000, 'trends pipeline caught up');
  core.logger.info({ ms: Date.now() - started }, 'trend stream consumed');
}, 180_000);

afterAll(async () => {
  await pipeline?.stop();
  await sink?.close();
  await api?.close();
});

test('the refresh ranks by Mastodon scores; review gates what is shown', async () => {
  const result = await refreshTrends(core, stream.atMs);
  expect(result.ranked).toEqual({ tag: 2, status: 4, link: 1 });
  // The admin view shows everything ranked, with its review state.
  const admin = (await call('GET', '/api/v1/admin/trends/tags', moderator.token)).body as {
    name: string;
    requires_review: boolean;
    trendable: boolean;
    history: { accounts: string; uses: string }[];
  }[];
  expect(admin.map((t) => t.name)).toEqual(stream.expected.tags);
  expect(admin.every((t) => t.requires_review && !t.trendable)).toBe(true);
  expect(await ids('/api/v1/admin/trends/statuses', moderator.token)).toEqual(stream.expected.statuses);
  expect(
    ((await call('GET', '/api/v1/admin/trends/links', moderator.token)).body as { url: string }[]).map((l) => l.url),
  ).toEqual(['https://news.example/a']);

  // Nothing is public before review.
  expect(await names('/api/v1/trends/tags')).toEqual([]);
  expect(await ids('/api/v1/trends/statuses')).toEqual([]);
  expect((await call('GET', '/api/v1/trends/links')).body).toEqual([]);
});

test('admin approve/reject routes need manage_taxonomies; approved items trend', async () => {
  const tagDocs = await collection(core.db, tags)
    .find({ nameNormalized: { $in: ['alpha', 'beta', 'gamma'] } })
    .toArray();
  const tagId = (n: string) => String(tagDocs.find((t) => t.nameNormalized === n)!._id);
  expect((await call('POST', `/api/v1/admin/trends/tags/${tagId('alpha')}/approve`, reader.token)).status).toBe(403);
  expect((await call('GET', '/api/v1/admin/trends/tags', reader.token)).status).toBe(403);
  expect((await call('POST', '/api/v1/admin/trends/tags/999999/approve', moderator.token)).status).toBe(404);
  for (const n of ['alpha', 'beta']) {
    const res = await call('POST', `/api/v1/admin/trends/tags/${tagId(n)}/approve`, moderator.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: n, trendable: true, requires_review: false });
  }
  expect(await names('/api/v1/trends/tags')).toEqual(['alpha', 'beta']);
  expect(await names('/api/v1/trends')).toEqual(['alpha', 'beta']);
  // The caller's language first (Mastodon orders by it, it does not filter).
  expect(await names('/api/v1/trends/tags', german.token)).toEqual(stream.expected.tagsForGerman);
  // Offset pagination with Link headers.
  const res = await requester(api.server.url)('GET', '/api/v1/trends/tags?limit=1');
  expect(((await res.json()) as { name: string }[]).map((t) => t.name)).toEqual(['alpha']);
  expect(res.headers.get('link')).toContain('offset=1');
  expect(await names('/api/v1/trends/tags?limit=1&offset=1')).toEqual(['beta']);

  const rejected = await call('POST', `/api/v1/admin/trends/tags/${tagId('beta')}/reject`, moderator.token);
  expect(rejected.body).toMatchObject({ name: 'beta', trendable: false });
  expect(await names('/api/v1/trends/tags')).toEqual(['alpha']);

  const [s1, s2] = stream.expected.statuses as [string, string];
  expect((await call('POST', `/api/v1/admin/trends/statuses/${s2}/approve`, moderator.token)).status).toBe(200);
  expect((await call('POST', `/api/v1/admin/trends/statuses/${s1}/approve`, moderator.token)).status).toBe(200);
  expect(await ids('/api/v1/trends/statuses')).toEqual([s1, s2]);

  // Approving the publisher lets its unreviewed links trend; a rejected link stays out.
  const publishers = (await call('GET', '/api/v1/admin/trends/links/publishers', moderator.token)).body as {
    id: string;
    domain: string;
    trendable: boolean;
  }[];
  expect(publishers).toMatchObject([{ domain: 'news.example', trendable: false }]);
  const pub = await call('POST', `/api/v1/admin/trends/links/publishers/${publishers[0]!.id}/approve`, moderator.token);
  expect(pub.body).toMatchObject({ domain: 'news.example', trendable: true });
  expect((await call('GET', '/api/v1/trends/links')).body).toHaveLength(1);
  await call('POST', `/api/v1/admin/trends/links/${stream.cards.trending}/reject`, moderator.token);
  expect((await call('GET', '/api/v1/trends/links')).body).toEqual([]);
  const link = await call('POST', `/api/v1/admin/trends/links/${stream.cards.trending}/approve`, moderator.token);
  expect(link.status).toBe(200);
  const links = (await call('GET', '/api/v1/trends/links')).body as { url: string; history: { accounts: string }[] }[];
  expect(links.map((l) => l.url)).toEqual(['https://news.example/a']);
  expect(links[0]!.history[0]!.accounts).toBe('40');
  // Below 15 unique accounts a link never ranks, even approved.
  await call('POST', `/api/v1/admin/trends/links/${stream.cards.below}/approve`, moderator.token);
  expect((await call('GET', '/api/v1/trends/links')).body).toHaveLength(1);
});

test('auto-approval lets unreviewed (not rejected) items trend', async () => {
  await setAutoApprove(core, true);
  try {
    expect(await names('/api/v1/trends/tags')).toEqual(['alpha']); // beta stays rejected
    expect(await ids('/api/v1/trends/statuses')).toEqual(stream.expected.statuses);
    for (const s of stream.notTrending.statuses) expect(await ids('/api/v1/trends/statuses?limit=40')).not.toContain(s);
  } finally {
    await setAutoApprove(core, false);
  }
});

test('tag history: uses and unique accounts per day, 7 days', async () => {
  const tag = (await call('GET', '/api/v1/tags/alpha', reader.token)).body as { history: unknown[] };
  expect(tag.history).toHaveLength(7);
  const trending = (await call('GET', '/api/v1/admin/trends/tags', moderator.token)).body as {
    name: string;
    history: { day: string; accounts: string; uses: string }[];
  }[];
  const alpha = trending.find((t) => t.name === 'alpha')!;
  const day = String(Math.floor(stream.atMs / 86_400_000) * 86_400);
  expect(alpha.history[0]!.day).toBe(day);
  // HyperLogLog counts: within 2 % of the truth.
  expect(Number(alpha.history[0]!.accounts)).toBeGreaterThan(588);
  expect(Number(alpha.history[0]!.accounts)).toBeLessThan(612);
  expect(Number(alpha.history[0]!.uses)).toBeGreaterThan(11_760);
  expect(Number(alpha.history[0]!.uses)).toBeLessThan(12_240);
  expect(alpha.history[1]!.accounts).toBe('20');
});

test('review notices: one e-mail to each moderator, at most every two hours', async () => {
  const mails = () => api.published.filter((e) => e.type === 'MailRequested' && e.payload.to === moderator.user.email);
  expect(mails()).toHaveLength(1);
  expect(String(mails()[0]!.payload.subject)).toContain('New trends up for review');
  expect(String(mails()[0]!.payload.text)).toContain('tag alpha');
  expect(api.published.some((e) => e.type === 'MailRequested' && e.payload.to === reader.user.email)).toBe(false);
  // New items ask for review again, but the next notice waits two hours.
  await collection(core.db, trendReviews).deleteMany({});
  await refreshTrends(core, stream.atMs);
  expect(mails()).toHaveLength(1);
});
