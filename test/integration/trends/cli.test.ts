// The trends and search CLI commands, spawned as operators run them against the real servers:
// approve/reject a hashtag, auto-approval on/off, list, refresh, and a search index rebuild.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Core } from '../../../services/core/context.ts';
import { findOrCreateTag } from '../../../services/core/statuses/entities.ts';
import { reviewsOf, autoApprove } from '../../../services/core/trends/review.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { nodeBin, projectRoot, serverEnv } from '../../support/processes.ts';
import { postingKey } from '../../../services/core/search/statusIndex.ts';

const exec = promisify(execFile);

describe('trends and search CLI', () => {
  let core: Core;

  async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await exec(nodeBin, [join(projectRoot, 'services/cli/main.ts'), ...args], {
        cwd: projectRoot,
        env: { ...process.env, ...serverEnv(core.config) },
        timeout: 60_000,
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  beforeAll(async () => {
    ({ core } = await createTestCore(testConfig({ LOG_LEVEL: 'error' })));
  });

  afterAll(async () => {
    if (core) await closeTestCore(core);
  });

  it('approves and rejects hashtags, switches auto-approval, refreshes and lists', async () => {
    await findOrCreateTag(core, 'Cats');
    expect((await cli('trends', 'approve', 'tag', '#cats')).stdout.trim()).toBe('OK');
    expect((await reviewsOf(core, 'tag', ['cats'])).get('cats')?.state).toBe('approved');
    expect((await cli('trends', 'reject', 'tag', 'cats')).code).toBe(0);
    expect((await reviewsOf(core, 'tag', ['cats'])).get('cats')?.state).toBe('rejected');
    const missing = await cli('trends', 'approve', 'tag', 'nonesuch');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No such hashtag');
    expect((await cli('trends', 'approve', 'planet', '1')).code).toBe(1);
    expect((await cli('trends', 'approve', 'publisher', 'www.News.example')).code).toBe(0);
    expect((await reviewsOf(core, 'publisher', ['news.example'])).get('news.example')?.state).toBe('approved');

    expect((await cli('trends', 'auto-approve')).stdout.trim()).toBe('off');
    expect((await cli('trends', 'auto-approve', 'on')).code).toBe(0);
    expect(await autoApprove(core)).toBe(true);
    expect((await cli('trends', 'auto-approve', 'maybe')).code).toBe(1);

    const refreshed = await cli('trends', 'refresh');
    expect(refreshed.stdout).toContain('OK: 0 hashtags, 0 statuses, 0 links ranked');
    expect((await cli('trends', 'list', 'tags')).code).toBe(0);
  }, 120_000);

  it('rebuilds the search index from MongoDB', async () => {
    const { account } = await createTestUser(core);
    const status = await postStatus(core, account, { text: 'rebuild me please' });
    await core.redis.del(postingKey(account._id, 'rebuild'));
    const res = await cli('search', 'rebuild');
    expect(res.stdout).toContain('OK: 1 statuses indexed');
    expect(await core.redis.zscore(postingKey(account._id, 'rebuild'), String(status._id))).not.toBeNull();
  }, 120_000);
});
