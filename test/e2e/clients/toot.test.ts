// toot, the Mastodon command-line client (pinned in .ci/run), against a real server with a token
// from the fixtures: whoami, instance, post with media/CW/visibility, a poll, a reply, status and
// thread rendering, favourite/reblog/bookmark/pin and their undo, scheduling, delete. toot turns
// responses into typed dataclasses and fails on a missing or mistyped field, so its plain (not
// --json) output is the compatibility check. Skips when toot is not installed (fails under CI).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Core } from '../../../services/core/context.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { png } from '../../support/mediaFiles.ts';
import { describeWithTool } from '../../support/requiredTool.ts';
import { pythonWithClients } from './pythonClients.ts';
import { startInstance, type TestInstance } from '../../support/instance.ts';

const run = promisify(execFile);
const toot = join(dirname(pythonWithClients()), 'toot');
const available = existsSync(toot);
const describeWithClient = describeWithTool(
  available,
  'toot.test.ts',
  `no toot at ${toot} (pip install toot, as .ci/run does)`,
);

// toot's JSON output is checked field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describeWithClient('toot', () => {
  let core: Core;
  let server: TestInstance;
  let dir: string;
  let alice: TestUser;

  async function cli(...args: string[]): Promise<string> {
    try {
      const { stdout } = await run(toot, args, {
        env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config'), NO_COLOR: '1', TERM: 'dumb' },
        timeout: 60_000,
      });
      return stdout;
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      throw new Error(`toot ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, {
        cause: err,
      });
    }
  }
  const json = async (...args: string[]): Promise<Record<string, Json>> =>
    JSON.parse(await cli(...args, '--json')) as Record<string, Json>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toot-'));
    server = await startInstance({ MEDIA_DIR: join(dir, 'media') });
    core = server.core;
    alice = await createTestUser(core, { username: 'alice' });
    // What `toot login` would have saved.
    const instance = core.config.localDomain;
    const config = {
      apps: { [instance]: { instance, base_url: server.url, client_id: alice.app.clientId, client_secret: 'unused' } },
      users: { [`alice@${instance}`]: { instance, username: 'alice', access_token: alice.token } },
      active_user: `alice@${instance}`,
    };
    await mkdir(join(dir, 'config', 'toot'), { recursive: true });
    await writeFile(join(dir, 'config', 'toot', 'config.json'), JSON.stringify(config));
  });

  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('whoami and instance render', async () => {
    expect(await cli('whoami')).toContain('@alice');
    expect((await json('whoami')).username).toBe('alice');
    const instance = await cli('instance', server.url);
    expect(instance).toContain(core.config.localDomain);
  });

  it('posts with media, a content warning and a visibility; renders the status and thread; interacts; deletes', async () => {
    const image = join(dir, 'image.png');
    await writeFile(image, await png(64, 48));
    const posted = await json(
      'post',
      'Hello from toot #cli',
      '--media',
      image,
      '--description',
      'green square',
      '--spoiler-text',
      'toot test',
      '--visibility',
      'unlisted',
      '--language',
      'en',
    );
    expect(posted).toMatchObject({
      visibility: 'unlisted',
      spoiler_text: 'toot test',
      sensitive: true,
      language: 'en',
    });
    expect(posted.media_attachments).toEqual([expect.objectContaining({ type: 'image', description: 'green square' })]);

    const shown = await cli('status', posted.id);
    expect(shown).toContain('Hello from toot');
    expect(shown.replace(/\n/g, '')).toContain(posted.media_attachments[0].url);

    const reply = await json('post', 'a reply', '--reply-to', posted.id);
    expect(reply.in_reply_to_id).toBe(posted.id);
    const thread = await cli('thread', posted.id);
    expect(thread).toContain('Hello from toot');
    expect(thread).toContain('a reply');

    expect((await json('favourite', posted.id)).favourited).toBe(true);
    expect((await json('unfavourite', posted.id)).favourited).toBe(false);
    expect((await json('reblog', reply.id)).reblogged).toBe(true);
    expect((await json('unreblog', reply.id)).reblogged).toBe(false);
    expect((await json('bookmark', posted.id)).bookmarked).toBe(true);
    expect((await json('unbookmark', posted.id)).bookmarked).toBe(false);
    expect((await json('pin', posted.id)).pinned).toBe(true);
    expect((await json('unpin', posted.id)).pinned).toBe(false);
    // The plain forms render the returned status too.
    expect(await cli('favourite', reply.id)).toMatch(/favourited/i);

    const deleted = await json('delete', reply.id);
    expect(deleted.text).toBe('a reply');
    await expect(cli('status', reply.id)).rejects.toThrow(/not found/i);
    // About twenty `toot` processes in a row, each starting Python: past a minute on a loaded machine.
  }, 180_000);

  it('posts a poll and schedules a post', async () => {
    const poll = await json(
      'post',
      'Tea or coffee?',
      '--poll-option',
      'tea',
      '--poll-option',
      'coffee',
      '--poll-expires-in',
      '1h',
      '--poll-multiple',
    );
    expect(poll.poll).toMatchObject({ multiple: true, options: [{ title: 'tea' }, { title: 'coffee' }] });
    expect(await cli('status', poll.id)).toContain('coffee');

    const scheduled = await json('post', 'later', '--scheduled-in', '2h');
    expect(scheduled).toMatchObject({ params: { text: 'later' } });
    expect(Date.parse(scheduled.scheduled_at) - Date.now()).toBeGreaterThan(110 * 60_000);
  });
});
