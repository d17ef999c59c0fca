// Through a real client library (masto, in its own process): a v2 video upload that the media
// pipeline (Kafka) processes while masto polls, a focus edit, a scheduled status with that video
// that is listed, moved and published by the scheduler, a cancelled one, and a private poll that
// needs a token and the right to see its status.
import { join } from 'node:path';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { Core } from '../../../services/core/context.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { runMediaPipeline } from '../../../pipelines/media/index.ts';
import { runScheduler, type Scheduler } from '../../../pipelines/scheduler/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestServer } from '../../support/fixtures.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { runNodeForJson } from '../../support/processes.ts';
import { shortVideo } from '../../support/mediaFiles.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';

let api: TestApi;
let core: Core;
let server: TestServer;
let pipeline: Pipeline;
let scheduler: Scheduler;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'scheduled-e2e-'));
  api = await startTestApi({ MEDIA_DIR: join(dir, 'media'), SCHEDULED_STATUS_MIN_DELAY: '1' });
  ({ core, server } = api);
  pipeline = await runMediaPipeline(core, consumerTuning);
  scheduler = runScheduler(core, { intervalMs: 200 });
});

afterAll(async () => {
  await scheduler?.stop();
  await pipeline?.stop();
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

it('a client uploads a video, schedules it, and reads polls with the right permissions', async () => {
  const alice = await createTestUser(core);
  const bob = await createTestUser(core);
  const mp4 = join(dir, 'clip.mp4');
  await writeFile(mp4, await shortVideo());
  const seen = await runNodeForJson(
    'test/e2e/scheduled/mastoFlow.ts',
    [server.url, alice.token, bob.token, mp4],
    90_000,
  );
  expect(seen.video).toMatchObject({ type: 'video', fps: 10, focus: { x: 0.25, y: -0.5 } });
  expect(seen.video.url).toMatch(/\.mp4$/);
  expect(seen.scheduled).toEqual({
    id: expect.stringMatching(/^\d+$/),
    text: 'Later, via masto',
    mediaIds: [seen.video.id],
    media: [seen.video.id],
  });
  expect(seen.listedIds).toHaveLength(2);
  expect(seen.listedIds).toContain(seen.scheduled.id);
  expect(typeof seen.movedAt).toBe('string');
  expect(seen.remaining).toBe(0);
  // The scheduler published it once, with the video (and its focus) attached.
  const published = await collection(core.db, statuses)
    .find({ accountId: alice.account._id, text: 'Later, via masto' })
    .toArray();
  expect(published).toHaveLength(1);
  const read = await fetch(`${server.url}/api/v1/statuses/${published[0]._id}`, {
    headers: { authorization: `Bearer ${bob.token}` },
  });
  const body = (await read.json()) as { media_attachments: Array<{ id: string; meta: { focus?: unknown } }> };
  expect(body.media_attachments.map((m) => ({ id: m.id, focus: m.meta.focus }))).toEqual([
    { id: seen.video.id, focus: { x: 0.25, y: -0.5 } },
  ]);
  expect(await collection(core.db, statuses).countDocuments({ accountId: alice.account._id, text: 'Never mind' })).toBe(
    0,
  );
  expect(seen.poll).toEqual({
    ownRead: { voted: true, multiple: true, votersCount: 0 },
    anonymous: 404,
    stranger: 404,
  });
}, 120_000);
