// The admin CLI, spawned as operators run it (`node services/cli/main.ts ...`) against the real
// servers, with its results checked in MongoDB.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { users } from '../../../services/core/model/users.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { adminActions } from '../../../services/core/model/adminActions.ts';
import { getRegistrationsMode } from '../../../services/core/settings/settings.ts';
import { findRoleByName } from '../../../services/core/roles/roles.ts';
import { logIn } from '../../../services/core/users/login.ts';
import { Secret, TOTP } from 'otpauth';
import { beginOtpSetup, confirmOtpSetup } from '../../../services/core/users/twoFactor.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { nodeBin, projectRoot, serverEnv } from '../../support/processes.ts';

const exec = promisify(execFile);

describe('admin CLI', () => {
  let core: Core;

  /** The CLI as operators run it, on this test's database, Redis namespace and topics. */
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

  async function userOf(username: string) {
    const account = await collection(core.db, accounts).findOne({
      usernameLower: username.toLowerCase(),
      domain: null,
    });
    return account ? collection(core.db, users).findOne({ accountId: account._id }) : null;
  }

  beforeAll(async () => {
    ({ core } = await createTestCore(testConfig({ LOG_LEVEL: 'error' })));
  });

  afterAll(async () => {
    if (core) await closeTestCore(core);
  });

  it('creates a confirmed, approved account with a role and prints a working password', async () => {
    const res = await cli(
      'accounts',
      'create',
      'operator',
      '--email',
      'operator@example.test',
      '--confirmed',
      '--approve',
      '--role',
      'Owner',
    );
    expect(res.code).toBe(0);
    const password = /New password: (\S+)/.exec(res.stdout)?.[1];
    expect(res.stdout).toMatch(/^OK\n/);
    expect(password).toBeTruthy();
    const user = await userOf('operator');
    const owner = await findRoleByName(core, 'Owner');
    expect(user).toMatchObject({ approved: true, roleId: owner!._id, email: 'operator@example.test' });
    expect(user!.confirmedAt).toBeInstanceOf(Date);
    const login = await logIn(core, 'operator@example.test', password!);
    expect(login.ok).toBe(true);
    const account = await collection(core.db, accounts).findOne({ usernameLower: 'operator' });
    expect(account).toMatchObject({ pendingUser: false });
    expect(account!.publicKeyPem).toMatch(/BEGIN PUBLIC KEY/);
  });

  it('creates an unconfirmed account without --confirmed', async () => {
    const res = await cli('accounts', 'create', 'newbie', '--email', 'newbie@example.test');
    expect(res.code).toBe(0);
    const user = await userOf('newbie');
    expect(user!.confirmedAt).toBeNull();
    expect(user!.confirmationTokenHash).toEqual(expect.any(String));
  });

  it('modifies accounts: confirm, approve, role, disable and enable, each in the admin log', async () => {
    await cli('settings', 'registrations', 'approved');
    expect((await cli('accounts', 'create', 'waiting', '--email', 'waiting@example.test')).code).toBe(0);
    expect(await userOf('waiting')).toMatchObject({ approved: false, confirmedAt: null });
    const res = await cli('accounts', 'modify', 'waiting', '--confirm', '--approve', '--role', 'moderator');
    expect(res).toMatchObject({ code: 0, stdout: 'OK\n' });
    const user = await userOf('waiting');
    const moderator = await findRoleByName(core, 'Moderator');
    expect(user).toMatchObject({ approved: true, roleId: moderator!._id });
    expect(user!.confirmedAt).toBeInstanceOf(Date);
    expect(await collection(core.db, accounts).findOne({ usernameLower: 'waiting' })).toMatchObject({
      pendingUser: false,
    });

    expect((await cli('accounts', 'modify', 'waiting', '--disable')).code).toBe(0);
    expect(await userOf('waiting')).toMatchObject({ disabled: true });
    expect((await cli('accounts', 'modify', 'waiting', '--enable', '--remove-role')).code).toBe(0);
    expect(await userOf('waiting')).toMatchObject({ disabled: false, roleId: null });
    const actions = await collection(core.db, adminActions)
      .find({ targetId: String(user!._id) })
      .sort({ _id: 1 })
      .toArray();
    expect(actions.map((a) => a.action)).toEqual([
      'change_role',
      'confirm',
      'approve',
      'disable',
      'change_role',
      'enable',
    ]);
    expect(actions.every((a) => a.accountId === null && a.humanIdentifier === 'waiting')).toBe(true);
    await cli('settings', 'registrations', 'open');
  });

  it('turns off two-factor authentication with --disable-2fa (tootctl accounts modify), in the admin log', async () => {
    expect(
      (await cli('accounts', 'create', 'phoneless', '--email', 'phoneless@example.test', '--confirmed')).code,
    ).toBe(0);
    const user = await userOf('phoneless');
    const setup = await beginOtpSetup(core, user!, 'phoneless');
    const code = new TOTP({ secret: Secret.fromBase32(setup.secret) }).generate();
    expect(await confirmOtpSetup(core, user!, code)).toHaveLength(10);
    expect(await userOf('phoneless')).toMatchObject({ otpRequiredForLogin: true });
    const res = await cli('accounts', 'modify', 'phoneless', '--disable-2fa');
    expect(res).toMatchObject({ code: 0, stdout: 'OK\n' });
    expect(await userOf('phoneless')).toMatchObject({
      otpRequiredForLogin: false,
      otpSecret: null,
      otpBackupCodes: [],
    });
    await expect(
      collection(core.db, adminActions).findOne({ action: 'disable_2fa_user', targetId: String(user!._id) }),
    ).resolves.toMatchObject({ accountId: null, humanIdentifier: 'phoneless' });
  });

  it('makes a role require two-factor authentication (roles update --require-2fa / --no-require-2fa)', async () => {
    expect(await cli('roles', 'update', 'Moderator', '--require-2fa')).toMatchObject({ code: 0, stdout: 'OK\n' });
    await expect(findRoleByName(core, 'Moderator')).resolves.toMatchObject({ require2fa: true });
    expect(await cli('roles', 'update', 'Moderator', '--no-require-2fa')).toMatchObject({ code: 0 });
    await expect(findRoleByName(core, 'Moderator')).resolves.toMatchObject({ require2fa: false });
    const both = await cli('roles', 'update', 'Moderator', '--require-2fa', '--no-require-2fa');
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('--require-2fa and --no-require-2fa cannot be used together');
    const unknown = await cli('roles', 'update', 'Nobody', '--require-2fa');
    expect(unknown.code).toBe(1);
  });

  it('sets and shows the registrations mode', async () => {
    for (const mode of ['closed', 'approved', 'open'] as const) {
      expect(await cli('settings', 'registrations', mode)).toMatchObject({ code: 0, stdout: 'OK\n' });
      expect(await getRegistrationsMode(core)).toBe(mode);
    }
    expect(await cli('settings', 'registrations')).toMatchObject({ code: 0, stdout: 'open\n' });
  });

  it('explains bad input and exits non-zero', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['settings', 'registrations', 'sometimes'],
        /Unknown registrations mode "sometimes"; use one of: open, approved, closed/,
      ],
      [['accounts', 'create', 'bad name!', '--email', 'x@example.test'], /Invalid username: Username is invalid/],
      [['accounts', 'create', 'nomail'], /--email is required/],
      [['accounts', 'create', 'badmail', '--email', 'nope'], /Invalid e-mail address: nope/],
      [['accounts', 'create', 'operator', '--email', 'other@example.test'], /Username has already been taken/],
      [
        ['accounts', 'create', 'someone', '--email', 'x@example.test', '--role', 'Emperor'],
        /Cannot find user role with that name: Emperor/,
      ],
      [['accounts', 'modify', 'ghost', '--approve'], /No user with such username: ghost/],
      [['accounts', 'modify', 'operator', '--disable', '--enable'], /cannot be used together/],
      [['accounts', 'create', 'x', '--email', 'x@example.test', '--frobnicate'], /Unknown option '--frobnicate'/],
      [['accounts', 'delete', 'x'], /Unknown command: accounts delete x/],
    ];
    for (const [args, message] of cases) {
      const res = await cli(...args);
      expect({ args, code: res.code }).toEqual({ args, code: 1 });
      expect(res.stderr).toMatch(message);
    }
    expect(await userOf('someone')).toBeNull();
  });
});
