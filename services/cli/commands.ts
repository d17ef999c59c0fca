// The admin commands, in the style of Mastodon's tootctl. Each takes parsed arguments and the core,
// prints what an operator needs on `out`, and throws CliError for bad input (exit code 1).
import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { resetTwoFactorByAdmin } from '../core/users/twoFactor.ts';
import type { Core } from '../core/context.ts';
import {
  FEED_ACCESS_SETTINGS,
  FEED_ACCESS_VALUES,
  getFeedAccess,
  isFeedAccess,
  isFeedAccessSetting,
  setFeedAccess,
} from '../core/settings/feedAccess.ts';
import type { RegistrationsMode } from '../core/config.ts';
import { collection } from '../core/db/mongo.ts';
import { users, type UserDoc } from '../core/model/users.ts';
import type { RoleDoc } from '../core/model/roles.ts';
import { createLocalAccount, findLocalAccountByUsername, AccountValidationError } from '../core/accounts/create.ts';
import { validateUsername, isValidEmail, fullMessages } from '../core/accounts/validation.ts';
import { generatePassword } from '../core/users/passwords.ts';
import { findRoleByName } from '../core/roles/roles.ts';
import { approveUser, changeRole, confirmUserByAdmin, setDisabled } from '../core/users/moderation.ts';
import {
  getRegistrationsMode,
  isRegistrationsMode,
  setRegistrationsMode,
  REGISTRATIONS_MODES,
} from '../core/settings/settings.ts';

export class CliError extends Error {}

/** The bytes of a file an operator named; one that cannot be read is a CliError. */
export function readInputFile(file: string): Promise<Buffer> {
  return readFile(file).catch(() => {
    throw new CliError(`Cannot read ${file}`);
  });
}

/** A command's options and positional arguments (an unknown option is an error, as tootctl's). */
export function commandArgs<O extends ParseArgsOptionsConfig>(args: string[], options: O) {
  return parseArgs({ args, allowPositionals: true, strict: true, options });
}

export type Out = (line: string) => void;

async function roleNamed(core: Core, name: string): Promise<RoleDoc> {
  const role = await findRoleByName(core, name);
  if (!role) throw new CliError(`Cannot find user role with that name: ${name}`);
  return role;
}

async function userNamed(core: Core, username: string): Promise<UserDoc> {
  const account = await findLocalAccountByUsername(core, username);
  const user = account ? await collection(core.db, users).findOne({ accountId: account._id }) : null;
  if (!user) throw new CliError(`No user with such username: ${username}`);
  return user;
}

export interface CreateOptions {
  email?: string;
  confirmed?: boolean;
  approve?: boolean;
  role?: string;
}

/** Checks what needs no database: the name and the address. */
export function checkCreateInput(username: string, opts: CreateOptions): void {
  const nameProblems = validateUsername(username);
  if (Object.keys(nameProblems).length > 0) throw new CliError(`Invalid username: ${fullMessages(nameProblems)}`);
  if (!opts.email) throw new CliError('--email is required');
  if (!isValidEmail(opts.email)) throw new CliError(`Invalid e-mail address: ${opts.email}`);
}

export function checkRegistrationsMode(mode: string | undefined): void {
  if (mode !== undefined && !isRegistrationsMode(mode))
    throw new CliError(`Unknown registrations mode "${mode}"; use one of: ${REGISTRATIONS_MODES.join(', ')}`);
}

export async function accountsCreate(core: Core, username: string, opts: CreateOptions, out: Out): Promise<void> {
  checkCreateInput(username, opts);
  const email = opts.email as string;
  const role = opts.role ? await roleNamed(core, opts.role) : null;
  const password = generatePassword();
  const mode = await getRegistrationsMode(core);
  try {
    const { user } = await createLocalAccount(core, {
      username,
      email,
      password,
      confirmed: opts.confirmed === true,
      approved: opts.approve === true || mode !== 'approved',
      roleId: role?._id ?? null,
    });
    if (role) await changeRole(core, user, role, null);
  } catch (err) {
    if (err instanceof AccountValidationError) throw new CliError(`Failure/Error: ${fullMessages(err.problems)}`);
    throw err;
  }
  out('OK');
  out(`New password: ${password}`);
}

export interface ModifyOptions {
  confirm?: boolean;
  approve?: boolean;
  role?: string;
  removeRole?: boolean;
  disable?: boolean;
  enable?: boolean;
  /** tootctl's --disable-2fa: turns off two-factor authentication (a user who lost their phone and codes). */
  disable2fa?: boolean;
}

export async function accountsModify(core: Core, username: string, opts: ModifyOptions, out: Out): Promise<void> {
  if (opts.disable && opts.enable) throw new CliError('--disable and --enable cannot be used together');
  if (opts.role && opts.removeRole) throw new CliError('--role and --remove-role cannot be used together');
  let user = await userNamed(core, username);
  const role = opts.role ? await roleNamed(core, opts.role) : null;
  if (role) user = await changeRole(core, user, role, null);
  if (opts.removeRole) user = await changeRole(core, user, null, null);
  if (opts.confirm) user = await confirmUserByAdmin(core, user, null);
  if (opts.approve) user = await approveUser(core, user, null);
  if (opts.disable) user = await setDisabled(core, user, true, null);
  if (opts.enable) user = await setDisabled(core, user, false, null);
  if (opts.disable2fa) await resetTwoFactorByAdmin(core, user, username, null);
  out('OK');
}

export async function settingsRegistrations(core: Core, mode: string | undefined, out: Out): Promise<void> {
  if (mode === undefined) {
    out(await getRegistrationsMode(core));
    return;
  }
  checkRegistrationsMode(mode);
  await setRegistrationsMode(core, mode as RegistrationsMode);
  out('OK');
}

/** `settings feeds [NAME VALUE]`: prints the four feed access settings, or sets one. */
export async function settingsFeeds(core: Core, name: string | undefined, value: string | undefined, out: Out) {
  if (name === undefined) {
    const access = await getFeedAccess(core);
    out(`local_live_feed_access ${access.live.local}`);
    out(`remote_live_feed_access ${access.live.remote}`);
    out(`local_topic_feed_access ${access.topic.local}`);
    out(`remote_topic_feed_access ${access.topic.remote}`);
    return;
  }
  if (!isFeedAccessSetting(name))
    throw new CliError(`Unknown feed setting "${name}"; use one of: ${FEED_ACCESS_SETTINGS.join(', ')}`);
  if (!isFeedAccess(value))
    throw new CliError(`Unknown feed access "${value ?? ''}"; use one of: ${FEED_ACCESS_VALUES.join(', ')}`);
  await setFeedAccess(core, name, value);
  out('OK');
}
