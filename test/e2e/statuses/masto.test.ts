// End to end through a real client library (masto): post with a content warning, media and a
// poll, read it back, edit and read the history, reply and read the context, favourite/reblog/
// bookmark/pin and undo, delete and redraft. masto runs in its own Node process (mastoFlow.ts).
import { join } from 'node:path';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { png } from '../../support/mediaFiles.ts';
import type { Core } from '../../../services/core/context.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestServer } from '../../support/fixtures.ts';
import { runNodeForJson } from '../../support/processes.ts';

let api: TestApi;
let core: Core;
let server: TestServer;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'statuses-e2e-'));
  api = await startTestApi({ MEDIA_DIR: join(dir, 'media') });
  ({ core, server } = api);
});

afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

it('a client posts, edits, replies, interacts, deletes and redrafts', async () => {
  const alice = await createTestUser(core);
  const bob = await createTestUser(core);
  const image = join(dir, 'image.png');
  await writeFile(image, await png(80, 60));
  const seen = await runNodeForJson('test/e2e/statuses/mastoFlow.ts', [server.url, alice.token, bob.token, image]);
  expect(seen.posted).toMatchObject({ spoilerText: 'greeting', sensitive: true, language: 'en' });
  expect(seen.readContent).toContain('#<span>fediverse</span>');
  expect(seen.editedAt).toBeTruthy();
  expect(seen.editedContent).toBe('<p>Hello again</p>');
  expect(seen.historyLength).toBe(2);
  expect(seen.ancestors).toEqual([seen.posted.id]);
  expect(seen).toMatchObject({
    favourited: true,
    reblogOf: seen.posted.id,
    reblogReblogged: true,
    bookmarked: true,
    pinned: true,
  });
  expect(seen.favouriteIds).toEqual([seen.posted.id]);
  expect(seen.undone).toEqual({ favourited: false, reblogged: false, bookmarked: false, pinned: false });
  expect(seen.deletedText).toBe('Hello again');
  expect(seen.redraft).toMatchObject({ content: '<p>Hello again</p>', spoilerText: 'greeting' });
  expect(seen.redraft.id).not.toBe(seen.posted.id);
  expect(seen.goneStatus).toBe(404);
  expect(seen.media).toEqual([{ id: seen.mediaId, description: 'a test image', type: 'image' }]);
  expect(seen.poll).toEqual({ options: ['this', 'that'], votesAfterVote: 1, ownVotes: [1] });
});
