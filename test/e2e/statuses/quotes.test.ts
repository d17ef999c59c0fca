// Quote posts (Mastodon 4.5) over HTTP, with the fan-out and notifications pipelines consuming the
// real events and the streaming server publishing: posting quotes under each policy and
// visibility (Mastodon's errors), quote_approval, quotes_count, the author's list of quotes with
// Link, revocation, the quoted post's deletion, PUT interaction_policy, the default policy in
// source[quote_policy] and preferences, the `quote` and `quoted_update` notifications, and the
// quote in streaming payloads and timelines.
import type { Core } from '../../../services/core/context.ts';
import { runFanOutPipeline } from '../../../pipelines/fanout/index.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startStreamingServer, type StreamingServer } from '../../../services/streaming/server.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { eventually } from '../../support/core.ts';
import { Client, statusOf } from '../streaming/wsClient.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { createRemoteAccount, createRemoteStatus } from '../../support/remoteAccounts.ts';

let api: TestApi;
let core: Core;
let fanout: Pipeline;
let notifier: Pipeline;
let streaming: StreamingServer;
let alice: TestUser, bob: TestUser, carol: TestUser;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

async function post(user: TestUser, body: Record<string, unknown>) {
  const res = await call('POST', '/api/v1/statuses', user.token, body);
  expect(res.status).toBe(200);
  return res.body;
}

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  [fanout, notifier] = await Promise.all([
    runFanOutPipeline(core, consumerTuning),
    runNotificationsPipeline(core, consumerTuning),
  ]);
  streaming = await startStreamingServer({ host: '127.0.0.1', port: 0, logger: core.logger, core });
  [alice, bob, carol] = await Promise.all(Array.from({ length: 3 }, () => createTestUser(core)));
  // Bob follows Alice; Carol follows nobody.
  expect((await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, bob.token)).status).toBe(200);
});

afterAll(async () => {
  await streaming?.stop(1000);
  await fanout?.stop();
  await notifier?.stop();
  await api?.close();
});

test('quoting a public post: accepted, counted, rendered with the quoted post and its approval', async () => {
  const quoted = await post(alice, { status: 'worth quoting' });
  expect(quoted.quote).toBeNull();
  expect(quoted.quotes_count).toBe(0);
  expect(quoted.quote_approval).toEqual({ automatic: ['public'], manual: [], current_user: 'automatic' });
  const viewed = await call('GET', `/api/v1/statuses/${quoted.id}`, carol.token);
  expect(viewed.body.quote_approval.current_user).toBe('automatic');
  expect((await call('GET', `/api/v1/statuses/${quoted.id}`)).body.quote_approval.current_user).toBe('denied');

  const quoting = await post(bob, { status: 'look at this', quoted_status_id: quoted.id });
  expect(quoting.quote.state).toBe('accepted');
  expect(quoting.quote.quoted_status.id).toBe(quoted.id);
  expect(quoting.quote.quoted_status.content).toContain('worth quoting');
  expect(quoting.quote.quoted_status.quote).toBeNull();
  expect((await call('GET', `/api/v1/statuses/${quoted.id}`, alice.token)).body.quotes_count).toBe(1);

  // A quote of that quote: the inner one is a ShallowQuote.
  const deeper = await post(carol, { status: 'and this', quoted_status_id: quoting.id });
  expect(deeper.quote.quoted_status.quote).toEqual({ state: 'accepted', quoted_status_id: quoted.id });

  // Timelines (spliced JSON) and search show the same quote.
  const home = await call('GET', '/api/v1/timelines/home', bob.token);
  const inHome = home.body.find((s: { id: string }) => s.id === quoting.id);
  expect(inHome.quote).toEqual(quoting.quote);
  const account = await call('GET', `/api/v1/accounts/${bob.account._id}/statuses`, carol.token);
  expect(account.body.find((s: { id: string }) => s.id === quoting.id).quote.quoted_status.id).toBe(quoted.id);
});

test('who may quote: policies, visibility and Mastodon errors', async () => {
  const notFound = { error: 'The post you are trying to quote does not appear to exist.' };
  const nobody = await post(alice, { status: 'do not quote', quote_approval_policy: 'nobody' });
  expect(nobody.quote_approval).toEqual({ automatic: [], manual: [], current_user: 'automatic' });
  let res = await call('POST', '/api/v1/statuses', carol.token, { status: 'x', quoted_status_id: nobody.id });
  expect(res.status).toBe(404);
  expect(res.body).toEqual(notFound);
  // The author may always quote their own post.
  expect((await post(alice, { status: 'me again', quoted_status_id: nobody.id })).quote.state).toBe('accepted');

  const followers = await post(alice, { status: 'followers only quotes', quote_approval_policy: 'followers' });
  expect((await call('GET', `/api/v1/statuses/${followers.id}`, bob.token)).body.quote_approval.current_user).toBe(
    'automatic',
  );
  expect((await call('GET', `/api/v1/statuses/${followers.id}`, carol.token)).body.quote_approval.current_user).toBe(
    'denied',
  );
  res = await call('POST', '/api/v1/statuses', carol.token, { status: 'x', quoted_status_id: followers.id });
  expect(res.status).toBe(404);
  expect((await post(bob, { status: 'a follower quotes', quoted_status_id: followers.id })).quote.state).toBe(
    'accepted',
  );

  // A followers-only post has policy nobody; only its author quotes it, and the quote stays private.
  const privatePost = await post(alice, { status: 'for followers', visibility: 'private' });
  expect(privatePost.quote_approval.automatic).toEqual([]);
  res = await call('POST', '/api/v1/statuses', bob.token, { status: 'x', quoted_status_id: privatePost.id });
  expect(res.status).toBe(404);
  const ownQuote = await post(alice, { status: 'quoting my private post', quoted_status_id: privatePost.id });
  expect(ownQuote.visibility).toBe('private');
  expect(ownQuote.quote.state).toBe('accepted');

  // Direct posts cannot be quoted at all; a private mention quotes only mentioned authors' posts.
  const direct = await post(alice, { status: `@${bob.account.username} psst`, visibility: 'direct' });
  res = await call('POST', '/api/v1/statuses', alice.token, { status: 'x', quoted_status_id: direct.id });
  expect(res.status).toBe(404);
  const publicPost = await post(alice, { status: 'public words' });
  res = await call('POST', '/api/v1/statuses', carol.token, {
    status: 'secret quote',
    visibility: 'direct',
    quoted_status_id: publicPost.id,
  });
  expect(res.status).toBe(422);
  expect(res.body.error).toContain('Cannot quote a non-mentioned user in a Private Mention post.');
  const mentioned = await post(carol, {
    status: `@${alice.account.username} about this`,
    visibility: 'direct',
    quoted_status_id: publicPost.id,
  });
  expect(mentioned.quote.state).toBe('accepted');

  // A reblog, an unknown id, a bad policy.
  const reblog = await call('POST', `/api/v1/statuses/${publicPost.id}/reblog`, bob.token);
  res = await call('POST', '/api/v1/statuses', carol.token, { status: 'x', quoted_status_id: reblog.body.id });
  expect(res.status).toBe(404);
  res = await call('POST', '/api/v1/statuses', carol.token, { status: 'x', quoted_status_id: 'nope' });
  expect(res.body).toEqual(notFound);
  res = await call('POST', '/api/v1/statuses', carol.token, { status: 'x', quote_approval_policy: 'everyone' });
  expect(res.status).toBe(422);
});

test('GET /api/v1/statuses/:id/quotes: the author pages the accepted quotes with Link; others get 403', async () => {
  const quoted = await post(alice, { status: 'quote me thrice' });
  const ids: string[] = [];
  for (const u of [bob, carol, bob]) ids.unshift((await post(u, { status: 'q', quoted_status_id: quoted.id })).id);
  const first = await call('GET', `/api/v1/statuses/${quoted.id}/quotes?limit=2`, alice.token);
  expect(first.status).toBe(200);
  expect(first.body.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, 2));
  const link = first.headers.get('link') ?? '';
  const next = /<([^>]+)>; rel="next"/.exec(link)?.[1];
  expect(next).toContain(`max_id=${ids[1]}`);
  const second = await call('GET', new URL(next!).pathname + new URL(next!).search, alice.token);
  expect(second.body.map((s: { id: string }) => s.id)).toEqual([ids[2]]);
  expect((await call('GET', `/api/v1/statuses/${quoted.id}/quotes`, bob.token)).status).toBe(403);
  expect((await call('GET', `/api/v1/statuses/${quoted.id}/quotes`)).status).toBe(403);
});

test('revoking a quote and deleting the quoted post update the quoting post', async () => {
  const quoted = await post(alice, { status: 'I may change my mind' });
  const quoting = await post(bob, { status: 'quoting', quoted_status_id: quoted.id });
  const user = await Client.open(streaming.port, `access_token=${bob.token}&stream=user`);
  try {
    expect((await call('POST', `/api/v1/statuses/${quoted.id}/quotes/${quoting.id}/revoke`, carol.token)).status).toBe(
      403,
    );
    expect((await call('POST', `/api/v1/statuses/${quoted.id}/quotes/123/revoke`, alice.token)).status).toBe(404);
    const revoked = await call('POST', `/api/v1/statuses/${quoted.id}/quotes/${quoting.id}/revoke`, alice.token);
    expect(revoked.status).toBe(200);
    expect(revoked.body.id).toBe(quoting.id);
    expect(revoked.body.quote).toEqual({ state: 'revoked', quoted_status: null });
    expect((await call('GET', `/api/v1/statuses/${quoted.id}`, alice.token)).body.quotes_count).toBe(0);
    expect((await call('GET', `/api/v1/statuses/${quoted.id}/quotes`, alice.token)).body).toEqual([]);
    // The quoting post's readers get it again with the revoked quote.
    const m = await user.waitFor(
      (x) => x.event === 'status.update' && statusOf(x).id === quoting.id,
      'status.update of the revoked quote',
    );
    expect((statusOf(m) as { quote?: unknown }).quote).toEqual({ state: 'revoked', quoted_status: null });
  } finally {
    user.close();
  }

  const other = await post(alice, { status: 'soon deleted' });
  const quotingOther = await post(bob, { status: 'quoting what goes', quoted_status_id: other.id });
  expect((await call('DELETE', `/api/v1/statuses/${other.id}`, alice.token)).status).toBe(200);
  const after = await call('GET', `/api/v1/statuses/${quotingOther.id}`, bob.token);
  expect(after.body.quote).toEqual({ state: 'deleted', quoted_status: null });
});

test('PUT /api/v1/statuses/:id/interaction_policy and the default policy of the account', async () => {
  const s = await post(alice, { status: 'policy changes' });
  let res = await call('PUT', `/api/v1/statuses/${s.id}/interaction_policy`, alice.token, {
    quote_approval_policy: 'followers',
  });
  expect(res.status).toBe(200);
  expect(res.body.quote_approval).toEqual({ automatic: ['followers'], manual: [], current_user: 'automatic' });
  expect((await call('GET', `/api/v1/statuses/${s.id}`, carol.token)).body.quote_approval.current_user).toBe('denied');
  res = await call('PUT', `/api/v1/statuses/${s.id}/interaction_policy`, bob.token, {
    quote_approval_policy: 'public',
  });
  expect(res.status).toBe(403);
  res = await call('PUT', `/api/v1/statuses/${s.id}/interaction_policy`, alice.token, { quote_approval_policy: 'x' });
  expect(res.status).toBe(422);
  // An edit may set it too.
  res = await call('PUT', `/api/v1/statuses/${s.id}`, alice.token, {
    status: 'edited',
    quote_approval_policy: 'nobody',
  });
  expect(res.status).toBe(200);
  expect(res.body.quote_approval.automatic).toEqual([]);

  res = await call('PATCH', '/api/v1/accounts/update_credentials', carol.token, { source: { quote_policy: 'nobody' } });
  expect(res.status).toBe(200);
  expect(res.body.source.quote_policy).toBe('nobody');
  expect((await call('GET', '/api/v1/preferences', carol.token)).body['posting:default:quote_policy']).toBe('nobody');
  expect((await post(carol, { status: 'by default nobody' })).quote_approval.automatic).toEqual([]);
  res = await call('PATCH', '/api/v1/accounts/update_credentials', carol.token, { source: { quote_policy: 'all' } });
  expect(res.status).toBe(422);
});

test('notifications: quote to the quoted author, quoted_update to quoters when the quoted post is edited', async () => {
  const quoted = await post(carol, { status: 'notify me of quotes', quote_approval_policy: 'public' });
  const quoting = await post(alice, { status: 'quoting carol', quoted_status_id: quoted.id });
  const quoteNote = await eventually(
    async () =>
      (await call('GET', '/api/v1/notifications?types[]=quote', carol.token)).body.find(
        (n: { status?: { id: string } }) => n.status?.id === quoting.id,
      ),
    30_000,
    'quote notification',
  );
  expect(quoteNote.type).toBe('quote');
  expect(quoteNote.account.id).toBe(String(alice.account._id));
  expect(quoteNote.status.quote.quoted_status.id).toBe(quoted.id);

  expect((await call('PUT', `/api/v1/statuses/${quoted.id}`, carol.token, { status: 'edited words' })).status).toBe(
    200,
  );
  const updateNote = await eventually(
    async () =>
      (await call('GET', '/api/v1/notifications?types[]=quoted_update', alice.token)).body.find(
        (n: { status?: { id: string } }) => n.status?.id === quoted.id,
      ),
    30_000,
    'quoted_update notification',
  );
  expect(updateNote.account.id).toBe(String(carol.account._id));
  // Revoking (not an edit) notifies nobody of an update.
  await call('POST', `/api/v1/statuses/${quoted.id}/quotes/${quoting.id}/revoke`, carol.token);
  const grouped = await call('GET', '/api/v2/notifications?types[]=quote', carol.token);
  expect(grouped.status).toBe(200);
  expect(grouped.body.notification_groups.some((g: { type: string }) => g.type === 'quote')).toBe(true);
});

test('a scheduled quote keeps its quote; a post that may not be quoted is refused when scheduling', async () => {
  const quoted = await post(alice, { status: 'quote me later' });
  const at = new Date(Date.now() + 3600_000).toISOString();
  const scheduled = await call('POST', '/api/v1/statuses', bob.token, {
    status: 'later',
    scheduled_at: at,
    quoted_status_id: quoted.id,
    quote_approval_policy: 'followers',
  });
  expect(scheduled.status).toBe(200);
  expect(scheduled.body.params).toMatchObject({ quoted_status_id: quoted.id, quote_approval_policy: 'followers' });
  const closed = await post(alice, { status: 'closed', quote_approval_policy: 'nobody' });
  const refused = await call('POST', '/api/v1/statuses', bob.token, {
    status: 'later',
    scheduled_at: at,
    quoted_status_id: closed.id,
  });
  expect(refused.status).toBe(404);
});

test('a quote mentions the quoted author silently: they may see a private quote, are neither shown nor notified as mentioned', async () => {
  const [dave, erin] = await Promise.all([createTestUser(core), createTestUser(core)]);
  const quoted = await post(dave, { status: 'quote me privately' });
  const quoting = await post(erin, {
    status: 'only for my followers',
    visibility: 'private',
    quoted_status_id: quoted.id,
  });
  expect(quoting.quote.state).toBe('accepted');
  expect(quoting.mentions).toEqual([]);
  // Dave does not follow Erin, yet may read the private quote of his post (Mastodon's ensure_quoted_access).
  const seen = await call('GET', `/api/v1/statuses/${quoting.id}`, dave.token);
  expect(seen.status).toBe(200);
  expect(seen.body.mentions).toEqual([]);
  expect((await call('GET', `/api/v1/statuses/${quoting.id}`, carol.token)).status).toBe(404);
  await eventually(
    async () => (await call('GET', '/api/v1/notifications', dave.token)).body.length === 1,
    30_000,
    'quote notification',
  );
  await eventually(async () => (await notifier.lag()) === 0, 30_000, 'notifications caught up');
  const notes = (await call('GET', '/api/v1/notifications', dave.token)).body as { type: string }[];
  expect(notes.map((n) => n.type)).toEqual(['quote']);
  // An edit keeps the silent mention.
  const edited = await call('PUT', `/api/v1/statuses/${quoting.id}`, erin.token, { status: 'edited, still private' });
  expect(edited.status).toBe(200);
  expect(edited.body.mentions).toEqual([]);
  expect((await call('GET', `/api/v1/statuses/${quoting.id}`, dave.token)).status).toBe(200);
});

test('the quote state shows the viewer’s filters: blocked_domain, blocked_account, muted_account (quoted post kept)', async () => {
  const [frank, gina, viewer] = await Promise.all([createTestUser(core), createTestUser(core), createTestUser(core)]);
  const quoted = await post(frank, { status: 'filtered soon' });
  const quoting = await post(gina, { status: 'quoting frank', quoted_status_id: quoted.id });
  const stateFor = async () => {
    const single = (await call('GET', `/api/v1/statuses/${quoting.id}`, viewer.token)).body;
    const page = (await call('GET', `/api/v1/accounts/${gina.account._id}/statuses`, viewer.token)).body as {
      id: string;
      quote: { state: string; quoted_status: { id: string } | null };
    }[];
    const fromPage = page.find((s) => s.id === quoting.id)!.quote;
    expect(fromPage).toEqual(single.quote);
    return [single.quote.state, single.quote.quoted_status?.id ?? null];
  };
  expect(await stateFor()).toEqual(['accepted', quoted.id]);
  expect((await call('POST', `/api/v1/accounts/${frank.account._id}/mute`, viewer.token)).status).toBe(200);
  expect(await stateFor()).toEqual(['muted_account', quoted.id]);
  expect((await call('POST', `/api/v1/accounts/${frank.account._id}/block`, viewer.token)).status).toBe(200);
  expect(await stateFor()).toEqual(['blocked_account', quoted.id]);
  // The author sees their own quoted post unfiltered; nobody signed in sees it accepted.
  expect((await call('GET', `/api/v1/statuses/${quoting.id}`)).body.quote.state).toBe('accepted');

  // A remote quoted author on a domain the viewer blocks: blocked_domain comes first.
  const remote = await createRemoteAccount(core, 'https://quoted.example', 'remy');
  const [remoteQuoted, remoteQuoting] = [
    await createRemoteStatus(core, remote),
    await createRemoteStatus(core, remote),
  ];
  await collection(core.db, statuses).updateOne(
    { _id: remoteQuoting._id },
    {
      $set: {
        quote: {
          quotedStatusId: remoteQuoted._id,
          quotedAccountId: remote._id,
          state: 'accepted',
          quotedUri: remoteQuoted.uri,
          approvalUri: null,
          activityUri: null,
          legacy: false,
        },
      },
    },
  );
  const remoteState = async () =>
    (await call('GET', `/api/v1/statuses/${remoteQuoting._id}`, viewer.token)).body.quote.state as string;
  expect(await remoteState()).toBe('accepted');
  expect((await call('POST', `/api/v1/accounts/${remote._id}/mute`, viewer.token)).status).toBe(200);
  expect(await remoteState()).toBe('muted_account');
  expect((await call('POST', '/api/v1/domain_blocks', viewer.token, { domain: 'quoted.example' })).status).toBe(200);
  expect(await remoteState()).toBe('blocked_domain');
});
