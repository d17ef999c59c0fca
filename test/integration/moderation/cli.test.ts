// The moderation commands of the admin CLI, spawned as operators run them against the real servers.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { users } from '../../../services/core/model/users.ts';
import { roles } from '../../../services/core/model/roles.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { emailDomainBlocks, ipBlocks } from '../../../services/core/model/signUpBlocks.ts';
import { instanceDomainBlocks } from '../../../services/core/model/instanceDomainBlocks.ts';
import { accountWarnings } from '../../../services/core/model/reports.ts';
import { createReport } from '../../../services/core/moderation/reports.ts';
import { nextSerialId } from '../../../services/core/ids.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { nodeBin, projectRoot, serverEnv } from '../../support/processes.ts';

const exec = promisify(execFile);
jest.setTimeout(180_000);

describe('moderation CLI', () => {
  let core: Core;

  async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = { ...process.env, ...serverEnv(core.config) };
    try {
      const { stdout, stderr } = await exec(nodeBin, [join(projectRoot, 'services/cli/main.ts'), ...args], {
        cwd: projectRoot,
        env,
        timeout: 60_000,
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  /** A remote account on `domain` (as inbound federation would store it). */
  async function remoteAccount(username: string, domain: string) {
    const local = await createTestUser(core);
    const _id = await nextSerialId(core.db, 'accounts');
    await collection(core.db, accounts).insertOne({
      ...local.account,
      _id,
      username,
      usernameLower: username,
      domain,
      uri: `https://${domain}/users/${username}`,
      url: `https://${domain}/@${username}`,
      privateKeyPem: null,
    });
    return _id;
  }

  beforeAll(async () => {
    ({ core } = await createTestCore());
  });
  afterAll(async () => {
    if (core) await closeTestCore(core);
  });

  it('suspends and unsuspends accounts, approves pending ones', async () => {
    const u = await createTestUser(core);
    expect((await cli('accounts', 'suspend', u.account.username, '--text', 'spam')).stdout).toBe('OK\n');
    expect((await collection(core.db, accounts).findOne({ _id: u.account._id }))?.suspendedAt).not.toBeNull();
    expect((await collection(core.db, accountWarnings).findOne({ targetAccountId: u.account._id }))?.text).toBe('spam');
    expect((await cli('accounts', 'suspend', u.account.username)).code).toBe(1);
    expect((await cli('accounts', 'unsuspend', u.account.username)).stdout).toBe('OK\n');
    expect((await collection(core.db, accounts).findOne({ _id: u.account._id }))?.suspendedAt).toBeNull();
    expect((await cli('accounts', 'unsuspend', 'nobody_here')).stderr).toContain('No such account');

    const pending = await createTestUser(core, { approved: false });
    expect((await cli('accounts', 'approve', '--all')).stdout).toContain('OK');
    expect((await collection(core.db, users).findOne({ _id: pending.user._id }))?.approved).toBe(true);
  });

  it('blocks, unblocks and purges domains', async () => {
    const remote = await remoteAccount('troll', 'bad.example');
    const res = await cli('domains', 'block', 'Bad.Example', '--severity', 'suspend', '--reject-media');
    expect(res.stdout).toBe('OK, bad.example suspend\n');
    expect((await collection(core.db, accounts).findOne({ _id: remote }))?.suspendedAt).not.toBeNull();
    expect((await cli('domains', 'block', 'bad.example')).stderr).toContain('stricter limits');
    expect((await cli('domains', 'block', 'not a domain')).code).toBe(1);
    expect((await cli('domains', 'unblock', 'bad.example')).stdout).toBe('OK\n');
    expect(await collection(core.db, instanceDomainBlocks).countDocuments({})).toBe(0);
    expect((await collection(core.db, accounts).findOne({ _id: remote }))?.suspendedAt).toBeNull();

    await collection(core.db, statuses).insertOne({
      ...((await collection(core.db, statuses).findOne({})) ?? {}),
      _id: 12345n,
      accountId: remote,
      uri: 'https://bad.example/s/1',
      uniqueKey: 's:12345',
      deletedAt: null,
    } as never);
    expect((await cli('domains', 'purge', 'bad.example')).stdout).toBe('OK, removed 1 accounts\n');
    expect(await collection(core.db, accounts).countDocuments({ _id: remote })).toBe(0);
    expect((await collection(core.db, statuses).findOne({ _id: 12345n }))?.deletedAt).not.toBeNull();
  });

  it('manages e-mail domain blocks and IP blocks', async () => {
    expect((await cli('email-domain-blocks', 'add', 'Spam.Test', '--with-approval')).stdout).toBe('OK, spam.test\n');
    expect((await cli('email-domain-blocks', 'list')).stdout).toContain('spam.test (with approval)');
    expect((await cli('email-domain-blocks', 'add', 'spam.test')).code).toBe(1);
    expect((await cli('email-domain-blocks', 'remove', 'spam.test')).stdout).toBe('OK\n');
    expect(await collection(core.db, emailDomainBlocks).countDocuments({})).toBe(0);

    expect(
      (await cli('ip-blocks', 'add', '192.0.2.1/24', '--severity', 'no_access', '--duration', '3600')).stdout,
    ).toBe('OK, 192.0.2.0/24 no_access\n');
    expect((await cli('ip-blocks', 'list')).stdout).toMatch(/^192\.0\.2\.0\/24 no_access until /);
    expect((await cli('ip-blocks', 'add', '192.0.2.0/24')).stderr).toContain('--severity is required');
    expect((await cli('ip-blocks', 'add', '300.1.1.1', '--severity', 'no_access')).code).toBe(1);
    expect((await cli('ip-blocks', 'remove', '192.0.2.9/24')).stdout).toBe('OK\n');
    expect(await collection(core.db, ipBlocks).countDocuments({})).toBe(0);
  });

  it('lists reports', async () => {
    const [a, b] = [await createTestUser(core), await createTestUser(core)];
    await createReport(core, a.account, b.account, {
      statusIds: [],
      comment: 'rude words',
      category: 'other',
      ruleIds: [],
      forward: false,
      forwardToDomains: [],
    });
    const out = (await cli('reports', 'list')).stdout;
    expect(out).toMatch(new RegExp(`other ${a.account.username} -> ${b.account.username}: rude words`));
    expect((await cli('reports', 'list', '--resolved')).stdout).toBe('');
  });

  it('removes statuses as a moderator, leaving a strike', async () => {
    const author = await createTestUser(core);
    const status = await postStatus(core, author.account, { text: 'against the rules' });
    const res = await cli('statuses', 'remove', String(status._id), '--text', 'Removed', '--no-email');
    expect(res.stdout).toBe('OK, removed 1\n');
    expect((await collection(core.db, statuses).findOne({ _id: status._id }))?.deletedAt).not.toBeNull();
    const strike = await collection(core.db, accountWarnings).findOne({ targetAccountId: author.account._id });
    expect(strike).toMatchObject({ action: 'delete_statuses', text: 'Removed', statusIds: [status._id] });
    expect((await cli('statuses', 'remove', String(status._id))).stderr).toContain('No such statuses');
    expect((await cli('statuses', 'remove', 'abc')).code).toBe(1);
    // The action log shows the removal, newest first, done from the command line.
    const log = (await cli('action-log', '--limit', '1')).stdout;
    expect(log).toMatch(new RegExp(`^\\S+ \\(cli\\) destroy Status ${author.account.username}\\n$`));
  });

  it('manages roles; a role cannot grant more than its creator holds', async () => {
    expect(
      (await cli('roles', 'create', 'Helpers', '--permissions', 'manage_reports,view_dashboard', '--position', '5'))
        .stdout,
    ).toBe('OK, Helpers\n');
    expect((await cli('roles', 'list')).stdout).toContain('Helpers (position 5): view_dashboard, manage_reports');
    expect((await cli('roles', 'create', 'Bad', '--permissions', 'fly')).stderr).toContain('unknown permission');

    const moderator = await createTestUser(core, { role: 'Moderator' });
    const tooMuch = await cli(
      'roles',
      'create',
      'Sneaky',
      '--permissions',
      'manage_federation',
      '--as',
      moderator.account.username,
    );
    expect(tooMuch.code).toBe(1);
    const admin = await createTestUser(core, { role: 'Admin' });
    const asAdmin = await cli(
      'roles',
      'create',
      'Blockers',
      '--permissions',
      'manage_blocks,manage_roles',
      '--position',
      '50',
      '--as',
      admin.account.username,
    );
    expect(asAdmin.stdout).toBe('OK, Blockers\n');
    const outranking = await cli(
      'roles',
      'create',
      'Bosses',
      '--permissions',
      'manage_blocks',
      '--position',
      '500',
      '--as',
      admin.account.username,
    );
    expect(outranking.stderr).toContain('rank below');

    expect((await cli('roles', 'update', 'Helpers', '--permissions', 'manage_reports')).stdout).toBe('OK\n');
    expect((await collection(core.db, roles).findOne({ nameLower: 'helpers' }))?.permissions).toBe(1 << 4);
    expect((await cli('roles', 'delete', 'Owner')).code).toBe(1);
    expect((await cli('roles', 'delete', 'Helpers')).stdout).toBe('OK\n');
    expect(await collection(core.db, roles).countDocuments({ nameLower: 'helpers' })).toBe(0);
  });
});
