// Posting and editing statuses with media, polls and scheduling (the media area's parts joined
// through the statuses API), and form-encoded requests as Rails-style clients send them.
import type { Core } from '../../../services/core/context.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestServer, type TestUser } from '../../support/fixtures.ts';
import type { JsonClient } from '../../support/http.ts';
import { png } from '../../support/mediaFiles.ts';

let api: TestApi;
let core: Core;
let server: TestServer;
let call: JsonClient;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  api = await startTestApi({ SCHEDULED_STATUS_MIN_DELAY: '60' }, { mediaDir: true });
  ({ core, server, call } = api);
  alice = await createTestUser(core);
  bob = await createTestUser(core);
});

afterAll(() => api?.close());

async function uploadPng(token: string, description: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(await png(64, 48))], { type: 'image/png' }), 'a.png');
  form.append('description', description);
  const res = await fetch(`${server.url}/api/v1/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

async function form(method: string, path: string, token: string, body: string) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

it('posts with media, edits its description and removes it on edit', async () => {
  const m1 = await uploadPng(alice.token, 'first');
  const m2 = await uploadPng(alice.token, 'second');
  const posted = await call('POST', '/api/v1/statuses', alice.token, { status: 'pics', media_ids: [m2, m1] });
  expect(posted.status).toBe(200);
  expect(posted.body.media_attachments.map((m: { id: string }) => m.id)).toEqual([m2, m1]);
  expect(posted.body.media_attachments[0].description).toBe('second');
  // Attached media cannot be posted again, nor someone else's.
  expect((await call('POST', '/api/v1/statuses', alice.token, { status: 'again', media_ids: [m1] })).status).toBe(422);
  expect(
    (
      await call('POST', '/api/v1/statuses', bob.token, {
        status: 'mine?',
        media_ids: [await uploadPng(alice.token, 'x')],
      })
    ).status,
  ).toBe(422);

  const edited = await call('PUT', `/api/v1/statuses/${posted.body.id}`, alice.token, {
    status: 'pics edited',
    media_ids: [m1],
    media_attributes: [{ id: m1, description: 'new alt', focus: '0.5,-0.5' }],
  });
  expect(edited.status).toBe(200);
  expect(edited.body.media_attachments.map((m: { id: string; description: string }) => [m.id, m.description])).toEqual([
    [m1, 'new alt'],
  ]);
  const history = await call('GET', `/api/v1/statuses/${posted.body.id}/history`, alice.token);
  expect(history.body.map((h: { media_attachments: unknown[] }) => h.media_attachments.length)).toEqual([2, 1]);
});

it('posts a poll from a form and resets votes when an edit changes it', async () => {
  const posted = await form(
    'POST',
    '/api/v1/statuses',
    alice.token,
    'status=vote&poll[options][]=yes&poll[options][]=no&poll[expires_in]=600&poll[multiple]=0&sensitive=f',
  );
  expect(posted.status).toBe(200);
  expect(posted.body.sensitive).toBe(false);
  expect(posted.body.poll).toMatchObject({
    multiple: false,
    expired: false,
    votes_count: 0,
    voted: true,
    options: [
      { title: 'yes', votes_count: 0 },
      { title: 'no', votes_count: 0 },
    ],
  });
  const pollId = posted.body.poll.id;
  const voted = await call('POST', `/api/v1/polls/${pollId}/votes`, bob.token, { choices: ['0'] });
  expect(voted.status).toBe(200);
  expect((await call('GET', `/api/v1/statuses/${posted.body.id}`, bob.token)).body.poll).toMatchObject({
    votes_count: 1,
    voted: true,
    own_votes: [0],
  });
  const edited = await call('PUT', `/api/v1/statuses/${posted.body.id}`, alice.token, {
    status: 'vote again',
    poll: { options: ['yes', 'no', 'maybe'], expires_in: 600 },
  });
  expect(edited.status).toBe(200);
  const seen = (await call('GET', `/api/v1/statuses/${posted.body.id}`, bob.token)).body.poll;
  expect(seen).toMatchObject({ votes_count: 0, voted: false });
  expect(seen.options.map((o: { title: string }) => o.title)).toEqual(['yes', 'no', 'maybe']);
  expect((await call('GET', `/api/v1/statuses/${posted.body.id}/history`, null)).body[0].poll).toEqual({
    options: [{ title: 'yes' }, { title: 'no' }],
  });
  expect(
    (
      await call('POST', '/api/v1/statuses', alice.token, {
        status: 'bad',
        poll: { options: ['only'], expires_in: 600 },
      })
    ).status,
  ).toBe(422);
});

it('schedules a status (once per Idempotency-Key) and refuses a time too soon', async () => {
  const at = new Date(Date.now() + 3_600_000).toISOString();
  const first = await call(
    'POST',
    '/api/v1/statuses',
    alice.token,
    { status: 'later', scheduled_at: at },
    { 'idempotency-key': 'sched-1' },
  );
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({
    scheduled_at: expect.any(String),
    params: { text: 'later', visibility: 'public' },
  });
  const again = await call(
    'POST',
    '/api/v1/statuses',
    alice.token,
    { status: 'later', scheduled_at: at },
    { 'idempotency-key': 'sched-1' },
  );
  expect(again.body.id).toBe(first.body.id);
  const soon = await call('POST', '/api/v1/statuses', alice.token, {
    status: 'soon',
    scheduled_at: new Date(Date.now() + 5_000).toISOString(),
  });
  expect(soon.status).toBe(422);
  expect(
    (await call('POST', '/api/v1/statuses', alice.token, { status: 'x', scheduled_at: 'not a date' })).status,
  ).toBe(422);
});
