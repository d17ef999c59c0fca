// Direct-message conversations end to end: direct statuses go through Kafka to the notifications
// pipeline, which keeps each local participant's conversation (participants, newest status, unread)
// and announces it on the `direct` stream. The API lists them by newest status, marks them read
// and deletes them; a deleted status leaves its conversations.
import type { Core } from '../../../services/core/context.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startStreamingServer, type StreamingServer } from '../../../services/streaming/server.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { requester } from '../../support/http.ts';

let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let streaming: StreamingServer;
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

interface Conv {
  id: string;
  unread: boolean;
  accounts: { id: string }[];
  last_status: { id: string; content: string } | null;
}

const conversations = async (u: TestUser, qs = '') =>
  (await call('GET', `/api/v1/conversations${qs}`, u.token)).body as Conv[];

async function dm(from: TestUser, to: TestUser[], text: string, inReplyTo?: string): Promise<string> {
  const mentions = to.map((u) => `@${u.account.username}`).join(' ');
  const res = await call('POST', '/api/v1/statuses', from.token, {
    status: `${mentions} ${text}`,
    visibility: 'direct',
    ...(inReplyTo ? { in_reply_to_id: inReplyTo } : {}),
  });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

async function lastStatusIs(u: TestUser, statusId: string): Promise<Conv> {
  return eventually(
    async () => (await conversations(u)).find((c) => c.last_status?.id === statusId),
    30_000,
    `${u.account.username} sees ${statusId}`,
  );
}

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runNotificationsPipeline(core, consumerTuning);
  streaming = await startStreamingServer({ host: '127.0.0.1', port: 0, logger: core.logger, core });
  [alice, bob, carol, dave] = await Promise.all(Array.from({ length: 4 }, () => createTestUser(core)));
  // Everyone follows everyone, so no notification policy holds a private mention back.
  for (const a of [alice, bob, carol, dave])
    for (const b of [alice, bob, carol, dave])
      if (a !== b) await call('POST', `/api/v1/accounts/${b.account._id}/follow`, a.token);
});

afterAll(async () => {
  await streaming?.stop(1000);
  await pipeline?.stop();
  await api?.close();
});

test('a direct status makes a conversation for each participant; replies update it; read and delete', async () => {
  const first = await dm(alice, [bob, carol], 'secret plan');
  const forBob = await lastStatusIs(bob, first);
  const forCarol = await lastStatusIs(carol, first);
  const forAlice = await lastStatusIs(alice, first);
  expect(forBob.unread).toBe(true);
  expect(forCarol.unread).toBe(true);
  expect(forAlice.unread).toBe(false);
  expect(forBob.accounts.map((a) => a.id).sort()).toEqual([alice, carol].map((u) => String(u.account._id)).sort());
  expect(forAlice.accounts.map((a) => a.id).sort()).toEqual([bob, carol].map((u) => String(u.account._id)).sort());
  expect(forBob.last_status!.content).toContain('secret plan');

  // bob answers in the thread: the same conversations, newest status the reply, read for bob only
  const reply = await dm(bob, [alice, carol], 'count me in', first);
  const aliceAfter = await lastStatusIs(alice, reply);
  expect(aliceAfter.id).toBe(forAlice.id);
  expect(aliceAfter.unread).toBe(true);
  const bobAfter = await lastStatusIs(bob, reply);
  expect(bobAfter.id).toBe(forBob.id);
  expect(bobAfter.unread).toBe(false);
  expect(await conversations(alice)).toHaveLength(1);

  // read
  const read = await call('POST', `/api/v1/conversations/${aliceAfter.id}/read`, alice.token);
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({ id: aliceAfter.id, unread: false });
  expect((await conversations(alice))[0]!.unread).toBe(false);
  expect((await call('POST', `/api/v1/conversations/${aliceAfter.id}/read`, bob.token)).status).toBe(404);
  expect((await call('POST', '/api/v1/conversations/nope/read', alice.token)).status).toBe(404);

  // unread again (Mastodon's POST /api/v1/conversations/:id/unread)
  const unread = await call('POST', `/api/v1/conversations/${aliceAfter.id}/unread`, alice.token);
  expect(unread.status).toBe(200);
  expect(unread.body).toMatchObject({ id: aliceAfter.id, unread: true });
  expect((await conversations(alice))[0]!.unread).toBe(true);
  expect((await call('POST', `/api/v1/conversations/${aliceAfter.id}/unread`, bob.token)).status).toBe(404);
  expect((await call('POST', `/api/v1/conversations/${aliceAfter.id}/unread`)).status).toBe(401);
  expect((await call('POST', `/api/v1/conversations/${aliceAfter.id}/read`, alice.token)).body.unread).toBe(false);

  // delete: gone for carol only
  expect((await call('DELETE', `/api/v1/conversations/${forCarol.id}`, alice.token)).status).toBe(404);
  expect((await call('DELETE', `/api/v1/conversations/${forCarol.id}`, carol.token)).body).toEqual({});
  expect(await conversations(carol)).toEqual([]);
  expect(await conversations(bob)).toHaveLength(1);
  expect((await call('GET', '/api/v1/conversations')).status).toBe(401);
});

test('paginated by the newest status, with Link headers; a deleted status leaves the conversation', async () => {
  const erin = await createTestUser(core);
  const ids: string[] = [];
  const to: TestUser[] = [];
  for (const text of ['one', 'two', 'three']) {
    const u = await createTestUser(core);
    await call('POST', `/api/v1/accounts/${erin.account._id}/follow`, u.token);
    to.push(u);
    ids.push(await dm(erin, [u], text));
  }
  for (const id of ids) await lastStatusIs(erin, id);
  // the oldest conversation gets a reply: it moves to the top
  const bump = await dm(erin, [to[0]!], 'bump', ids[0]);
  await lastStatusIs(erin, bump);
  const all = await conversations(erin);
  expect(all.map((c) => c.last_status!.id)).toEqual([bump, ids[2], ids[1]]);

  const res = await requester(api.server.url)('GET', '/api/v1/conversations?limit=2', erin.token);
  const page = (await res.json()) as Conv[];
  expect(page.map((c) => c.last_status!.id)).toEqual([bump, ids[2]]);
  expect(res.headers.get('link')).toContain(`max_id=${ids[2]}>; rel="next"`);
  const next = await conversations(erin, `?limit=2&max_id=${ids[2]}`);
  expect(next.map((c) => c.last_status!.id)).toEqual([ids[1]]);
  const newer = await conversations(erin, `?min_id=${ids[1]}&limit=1`);
  expect(newer.map((c) => c.last_status!.id)).toEqual([ids[2]]);

  // deleting the newest status falls back to the previous one; deleting the only one removes it
  await call('DELETE', `/api/v1/statuses/${bump}`, erin.token);
  await lastStatusIs(erin, ids[0]!);
  await call('DELETE', `/api/v1/statuses/${ids[1]}`, erin.token);
  await eventually(async () => (await conversations(erin)).length === 2, 30_000, 'the emptied conversation gone');
  expect((await conversations(erin)).map((c) => c.last_status!.id)).toEqual([ids[2], ids[0]]);
});

test('the direct stream receives a conversation event and nothing else (Mastodon sends no update there)', async () => {
  const socket = new WebSocket(`ws://127.0.0.1:${streaming.port}/api/v1/streaming?stream=direct`, [dave.token]);
  const messages: { stream?: string[]; event?: string; payload?: string }[] = [];
  socket.addEventListener('message', (e) => messages.push(JSON.parse(String(e.data)) as (typeof messages)[number]));
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  try {
    // The subscription is made asynchronously: send until one arrives.
    const event = await eventually(
      async () => {
        const id = await dm(carol, [dave], 'are you there?');
        return eventually(
          async () =>
            messages.find(
              (m) => m.event === 'conversation' && (JSON.parse(m.payload ?? '{}') as Conv).last_status?.id === id,
            ),
          3_000,
          'conversation event',
        ).catch(() => undefined);
      },
      30_000,
      'a conversation event on the direct stream',
    );
    expect(event.stream).toEqual(['direct']);
    const conv = JSON.parse(event.payload!) as Conv;
    expect(conv.unread).toBe(true);
    expect(conv.accounts.map((a) => a.id)).toEqual([String(carol.account._id)]);
    // A second direct status: once its conversation event is in, an `update` sent before it
    // would have arrived too.
    const second = await dm(carol, [dave], 'still there?');
    await eventually(
      async () =>
        messages.some(
          (m) => m.event === 'conversation' && (JSON.parse(m.payload ?? '{}') as Conv).last_status?.id === second,
        ),
      20_000,
      'second conversation event',
    );
    expect(messages.filter((m) => m.event !== 'conversation')).toEqual([]);
  } finally {
    socket.close();
  }
});
