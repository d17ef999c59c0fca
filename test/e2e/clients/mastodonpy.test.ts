// Mastodon.py (pinned in .ci/run) against a real server: the Python script mastodonpy_flow.py
// registers an app, logs in through the authorization-code flow and uses the account, status,
// media (image, and video through the real media pipeline), poll, interaction, pagination and
// scheduling calls. Mastodon.py parses dates and ids and follows Link headers: any shape it does
// not accept fails a step here. Skips when Mastodon.py is not importable.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Core } from '../../../services/core/context.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { runMediaPipeline } from '../../../pipelines/media/index.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { png, shortVideo } from '../../support/mediaFiles.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { describeWithTool } from '../../support/requiredTool.ts';
import { canImport, pythonWithClients } from './pythonClients.ts';
import { startInstance, type TestInstance } from '../../support/instance.ts';

const run = promisify(execFile);
const python = pythonWithClients();
const available = canImport(python, 'mastodon');
const describeWithClient = describeWithTool(
  available,
  'mastodonpy.test.ts',
  `${python} cannot import mastodon (pip install Mastodon.py, as .ci/run does)`,
);

// The report's facts are checked field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Step {
  name: string;
  ok: boolean;
  error?: string;
  trace?: string;
}

describeWithClient('Mastodon.py', () => {
  let core: Core;
  let server: TestInstance;
  let pipeline: Pipeline;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mastodonpy-'));
    server = await startInstance({ MEDIA_DIR: join(dir, 'media') });
    core = server.core;
    pipeline = await runMediaPipeline(core, consumerTuning);
  });

  afterAll(async () => {
    await pipeline?.stop();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a bot registers, logs in by code, and uses accounts, statuses, media, polls, interactions, pagination, scheduling', async () => {
    const bot = await createTestUser(core, { username: 'pybot', email: 'pybot@example.test' });
    const voter = await createTestUser(core, { username: 'voter' });
    const image = join(dir, 'image.png');
    const video = join(dir, 'clip.mp4');
    await writeFile(image, await png(120, 90));
    await writeFile(video, await shortVideo());
    const input = {
      base: server.url,
      email: 'pybot@example.test',
      password: bot.password,
      voterToken: voter.token,
      png: image,
      mp4: video,
    };
    const { stdout } = await run(python, [join(__dirname, 'mastodonpy_flow.py'), JSON.stringify(input)], {
      timeout: 120_000,
      maxBuffer: 10 * 1024 * 1024,
    });
    const report = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      steps: Step[];
      facts: Record<string, Json>;
    };
    const failed = report.steps.filter((s) => !s.ok);
    if (failed.length > 0) console.error(failed.map((s) => `${s.name}: ${s.error}\n${s.trace ?? ''}`).join('\n\n'));
    expect(failed.map((s) => `${s.name}: ${s.error}`)).toEqual([]);
    expect(report.steps.length).toBeGreaterThanOrEqual(20);

    const f = report.facts;
    // Every field Mastodon.py's entity types do not mark optional is present.
    expect(f.missing ?? {}).toEqual({});
    expect(f.version).toMatch(/^4\.\d+\.\d+/);
    expect(f.appName).toBe('Mastodon.py test bot');
    expect(f.me).toEqual({ id: bot.account._id.toString(), username: 'pybot', created_at_is_datetime: true });
    expect(f.updated).toEqual({
      display_name: 'Py Bot',
      note: '<p>I am a bot written with Mastodon.py</p>',
      fields: [
        ['Language', 'Python'],
        ['Library', 'Mastodon.py'],
      ],
      bot: true,
      avatar_changed: true,
    });
    expect(f.image).toEqual({
      type: 'image',
      description: 'a generated image',
      has_url: true,
      focus: { x: 0.5, y: -0.25 },
    });
    expect(f.video).toEqual({ type: 'video', has_url: true });
    expect(f.posted).toMatchObject({
      visibility: 'unlisted',
      spoiler_text: 'bot post',
      sensitive: true,
      media_count: 2,
      tags: ['MastodonPy'],
      created_at_is_datetime: true,
    });
    expect(f.poll).toEqual({ options: ['tea', 'coffee', 'water'], multiple: true, expires_at_is_datetime: true });
    expect(f.vote).toEqual({ votes_count: 2, own_votes: [0, 2], voted: true, seen_by_author: [1, 0, 1] });
    expect(f.reply.in_reply_to_id).toBe(f.posted.id);
    expect(f.reply.ancestors).toEqual([f.posted.id]);
    expect(f.reply.descendants).toHaveLength(1);
    expect(f.edit).toMatchObject({
      edited_at_is_datetime: true,
      history: 2,
      source_text: 'Hello again from #MastodonPy',
      source_spoiler: 'edited bot post',
    });
    expect(f.edit.content).toContain('Hello again from');
    expect(f.edit.history_first).toContain('Hello from');
    expect(f.favourite).toEqual({ after: true, count: 1, undone: false });
    expect(f.reblog).toEqual({ of: f.reply.descendants[0], reblogged: true, undone: false });
    expect(f.bookmark).toEqual({ after: true });
    expect(f.pin).toEqual({ after: true, seen: true, undone: false });
    expect(f.pages.favourites).toEqual(f.pages.expected_favourites);
    expect(f.pages.bookmarks).toEqual(f.pages.expected_bookmarks);
    expect(f.scheduled).toMatchObject({
      listed: [f.scheduled.id],
      text: 'posted later',
      scheduled_at_is_datetime: true,
      moved_by_seconds: 3600,
      left: 0,
    });
    expect(f.deleted).toEqual({
      text: '@pybot replying to myself',
      id: f.reply.descendants[0],
      gone: 'MastodonNotFoundError',
    });
    expect(f.media_update).toEqual({
      description: 'described later',
      fetched: 'described later',
      focus: { x: -0.5, y: 0.5 },
    });
    expect(f.interactions).toEqual({
      favourited_by: ['voter'],
      reblogged_by: ['voter'],
      muted: true,
      unmuted: false,
      counts: [1, 1],
    });
    expect(f.idempotent).toBe(true);
    expect(f.lookups).toEqual({ account: 'pybot', lookup: true, poll_options: 3, emojis: 0, rules: true });
    expect(f.userinfo).toEqual({ preferred_username: 'pybot' });
    expect(f.signup).toEqual({
      token: true,
      unconfirmed: 'MastodonAPIError',
      taken_error: expect.stringContaining('Validation failed'),
      taken_details: { username: ['ERR_TAKEN'] },
    });
    expect(f.revoked).toBe('MastodonUnauthorizedError');
    expect(f.paging.second).toHaveLength(1);
    expect(f.paging.back).toEqual(f.paging.first);
    expect(f.paging.remaining).toBe(f.pages.expected_bookmarks.length);
    expect(f.profile).toEqual({
      header_set: true,
      locked: true,
      discoverable: true,
      unlocked: true,
      avatar_removed: true,
      header_removed: true,
    });
    expect(f.errors).toEqual({
      too_long: [422, expect.stringContaining('Validation failed')],
      missing: [404, 'Record not found'],
      voted_twice: 422,
    });
    expect(f.more).toEqual({ media_only: true, thumbnail: true, scheduled_visibility: 'private', deleted_media: 1 });
    // One Python process makes some sixty calls, a video upload and its thumbnail among them: on a
    // loaded CI machine that has run past the default minute.
  }, 180_000);
});
