// Filters over HTTP: v2 CRUD with keywords_attributes (add, edit, destroy in one request), keyword
// and status-entry sub-resources, v1 filters as keywords, validation errors, one `filters_changed`
// per changing request, and `filtered` on served statuses (whole-word matching, status entries,
// expired filters ignored).
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { connectRedis } from '../../../services/core/db/redis.ts';
import { filters } from '../../../services/core/model/filters.ts';
import { channelName, timelineChannels } from '../../../services/core/streaming/channels.ts';
import { keywordRegex } from '../../../services/core/filters/match.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';

let api: TestApi;
let core: Core;
let alice: TestUser, bob: TestUser;
const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  [alice, bob] = await Promise.all([createTestUser(core), createTestUser(core)]);
});
afterAll(async () => {
  await api?.close();
});

test('whole-word matching as Mastodon builds its regex', () => {
  const ww = (keyword: string) => keywordRegex({ keyword, wholeWord: true });
  expect(ww('cat').test('A Cat sat')).toBe(true);
  expect(ww('cat').test('concatenate')).toBe(false);
  expect(ww('cat').test('cats')).toBe(false);
  expect(ww('café').test('le café.')).toBe(true);
  expect(ww('café').test('cafés')).toBe(false);
  expect(ww('#tag').test('see #tag!')).toBe(true);
  expect(keywordRegex({ keyword: 'cat', wholeWord: false }).test('concatenate')).toBe(true);
  expect(ww('a.b').test('axb')).toBe(false);
});

test('v2 filters: CRUD, keywords, statuses, validation, filters_changed once per request', async () => {
  const sub = connectRedis(core.config);
  const events: string[] = [];
  await sub.subscribe(channelName(core.config, timelineChannels.user(alice.account._id)));
  sub.on('message', (_c, m) => events.push(m));
  try {
    const bad = await call('POST', '/api/v2/filters', alice.token, { title: '', context: ['home'] });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/Title can't be blank/);
    expect((await call('POST', '/api/v2/filters', alice.token, { title: 't', context: ['nowhere'] })).status).toBe(422);
    expect((await call('POST', '/api/v2/filters', alice.token, { title: 't' })).status).toBe(422);

    const created = await call('POST', '/api/v2/filters', alice.token, {
      title: 'Animals',
      context: ['home', 'public'],
      filter_action: 'warn',
      keywords_attributes: [
        { keyword: 'cat', whole_word: true },
        { keyword: 'dog', whole_word: false },
        { keyword: 'owl' },
      ],
    });
    expect(created.status).toBe(200);
    const f = created.body;
    expect(f).toMatchObject({ title: 'Animals', context: ['home', 'public'], filter_action: 'warn', expires_at: null });
    expect(f.keywords.map((k: { keyword: string }) => k.keyword)).toEqual(['cat', 'dog', 'owl']);
    await eventually(async () => events.length === 1, 5_000, 'filters_changed after create');

    const [cat, dog, owl] = f.keywords as { id: string }[];
    const updated = await call('PUT', `/api/v2/filters/${f.id}`, alice.token, {
      title: 'Pets',
      keywords_attributes: [
        { id: cat!.id, keyword: 'kitten' },
        { id: dog!.id, _destroy: true },
        { keyword: 'parrot', whole_word: false },
      ],
    });
    expect(updated.status).toBe(200);
    expect(updated.body.title).toBe('Pets');
    expect(updated.body.keywords.map((k: { keyword: string }) => k.keyword)).toEqual(['kitten', 'owl', 'parrot']);
    expect(
      (
        await call('PUT', `/api/v2/filters/${f.id}`, alice.token, {
          keywords_attributes: [{ id: '999999', keyword: 'x' }],
        })
      ).status,
    ).toBe(404);
    await eventually(async () => events.length === 2, 5_000, 'one filters_changed for the update');

    // keyword sub-resource (also under v1)
    const kw = await call('POST', `/api/v2/filters/${f.id}/keywords`, alice.token, { keyword: 'hamster' });
    expect(kw.body).toMatchObject({ keyword: 'hamster', whole_word: true });
    expect((await call('GET', `/api/v1/filters/keywords/${kw.body.id}`, alice.token)).body.keyword).toBe('hamster');
    expect(
      (await call('PUT', `/api/v2/filters/keywords/${kw.body.id}`, alice.token, { keyword: 'gerbil' })).body.keyword,
    ).toBe('gerbil');
    expect((await call('DELETE', `/api/v2/filters/keywords/${owl!.id}`, alice.token)).status).toBe(200);
    expect((await call('POST', `/api/v2/filters/${f.id}/keywords`, alice.token, { keyword: ' ' })).status).toBe(422);
    expect((await call('GET', `/api/v2/filters/${f.id}/keywords`, bob.token)).status).toBe(404);

    // status entries
    const post = (await call('POST', '/api/v1/statuses', bob.token, { status: 'nothing to see' })).body.id;
    const entry = await call('POST', `/api/v2/filters/${f.id}/statuses`, alice.token, { status_id: post });
    expect(entry.body).toMatchObject({ status_id: post });
    expect((await call('GET', `/api/v2/filters/statuses/${entry.body.id}`, alice.token)).body.status_id).toBe(post);
    expect((await call('GET', `/api/v2/filters/${f.id}/statuses`, alice.token)).body).toHaveLength(1);

    const shown = await call('GET', `/api/v2/filters/${f.id}`, alice.token);
    expect(shown.body.keywords.map((k: { keyword: string }) => k.keyword)).toEqual(['kitten', 'parrot', 'gerbil']);
    expect((await call('GET', '/api/v2/filters', alice.token)).body).toHaveLength(1);
    expect((await call('GET', `/api/v2/filters/${f.id}`, bob.token)).status).toBe(404);

    const before = events.length;
    expect((await call('DELETE', `/api/v2/filters/statuses/${entry.body.id}`, alice.token)).status).toBe(200);
    expect((await call('DELETE', `/api/v2/filters/${f.id}`, alice.token)).status).toBe(200);
    expect((await call('GET', `/api/v2/filters/${f.id}`, alice.token)).status).toBe(404);
    await eventually(async () => events.length === before + 2, 5_000, 'two more filters_changed');
    expect(events.every((e) => JSON.parse(e).event === 'filters_changed')).toBe(true);
  } finally {
    sub.disconnect();
  }
});

test('v1 filters are keywords of v2 filters', async () => {
  const res = await call('POST', '/api/v1/filters', alice.token, {
    phrase: 'spoilers',
    context: ['home'],
    irreversible: true,
    whole_word: false,
    expires_in: 3600,
  });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ phrase: 'spoilers', context: ['home'], irreversible: true, whole_word: false });
  expect(res.body.expires_at).not.toBeNull();
  const v2 = (await call('GET', '/api/v2/filters', alice.token)).body as { title: string; filter_action: string }[];
  expect(v2.find((x) => x.title === 'spoilers')?.filter_action).toBe('hide');
  const put = await call('PUT', `/api/v1/filters/${res.body.id}`, alice.token, {
    phrase: 'leaks',
    context: ['home', 'thread'],
  });
  expect(put.body).toMatchObject({ phrase: 'leaks', context: ['home', 'thread'] });
  expect((await call('GET', '/api/v1/filters', alice.token)).body.map((x: { phrase: string }) => x.phrase)).toContain(
    'leaks',
  );
  expect((await call('POST', '/api/v1/filters', alice.token, { phrase: '', context: ['home'] })).status).toBe(422);
  expect((await call('DELETE', `/api/v1/filters/${res.body.id}`, alice.token)).status).toBe(200);
  expect((await call('GET', `/api/v1/filters/${res.body.id}`, alice.token)).status).toBe(404);
});

test('served statuses carry filtered: keyword and status matches; expired filters do not apply', async () => {
  const f = (
    await call('POST', '/api/v2/filters', alice.token, {
      title: 'No cats',
      context: ['home'],
      keywords_attributes: [{ keyword: 'cat', whole_word: true }],
    })
  ).body;
  const catPost = (await call('POST', '/api/v1/statuses', bob.token, { status: 'My CAT is here' })).body.id;
  const concat = (await call('POST', '/api/v1/statuses', bob.token, { status: 'concatenate strings' })).body.id;
  const other = (await call('POST', '/api/v1/statuses', bob.token, { status: 'plain' })).body.id;
  await call('POST', `/api/v2/filters/${f.id}/statuses`, alice.token, { status_id: other });

  const seen = (await call('GET', `/api/v1/statuses/${catPost}`, alice.token)).body;
  expect(seen.filtered).toEqual([
    {
      filter: { id: f.id, title: 'No cats', context: ['home'], expires_at: null, filter_action: 'warn' },
      keyword_matches: ['cat'],
      status_matches: null,
    },
  ]);
  expect((await call('GET', `/api/v1/statuses/${concat}`, alice.token)).body.filtered).toEqual([]);
  expect((await call('GET', `/api/v1/statuses/${other}`, alice.token)).body.filtered[0].status_matches).toEqual([
    other,
  ]);
  // a reblog wrapper is matched on its original
  const reblog = (await call('POST', `/api/v1/statuses/${catPost}/reblog`, bob.token)).body.id;
  expect((await call('GET', `/api/v1/statuses/${reblog}`, alice.token)).body.filtered).toHaveLength(1);
  // other viewers are unaffected
  expect((await call('GET', `/api/v1/statuses/${catPost}`, bob.token)).body.filtered).toEqual([]);

  await collection(core.db, filters).updateOne(
    { _id: BigInt(f.id) },
    { $set: { expiresAt: new Date(Date.now() - 1000) } },
  );
  expect((await call('GET', `/api/v1/statuses/${catPost}`, alice.token)).body.filtered).toEqual([]);
});
