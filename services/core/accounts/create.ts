// Creating a local account with its user: the one path used by sign-up, the CLI and test fixtures.
// The account, the user and the events (AccountCreated, and the confirmation mail when the user
// still has to confirm) are written through the outbox, so a crash never loses the mail.
import type { Core } from '../context.ts';
import type { NewEvent } from '../events/outbox.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { accounts, blankProfile, type AccountDoc } from '../model/accounts.ts';
import { users, type UserDoc } from '../model/users.ts';
import { newSecret, hashSecret } from '../auth/tokens.ts';
import { hashPassword } from '../users/passwords.ts';
import { confirmationMailEvent } from '../users/confirmation.ts';
import { generateActorKeyPair } from './keys.ts';
import { localActorUrls } from './urls.ts';
import { fullMessages, taken, type FieldProblems } from './validation.ts';
import { ValidationError } from '../errors.ts';
import { markActive } from '../feeds/activity.ts';

export interface NewLocalAccount {
  username: string;
  email: string;
  password: string;
  locale?: string | null;
  /** Default false: a confirmation e-mail is sent. */
  confirmed?: boolean;
  /** Default true; false in registration mode "approved". */
  approved?: boolean;
  roleId?: Id | null;
  createdByAppId?: Id | null;
  signUpIp?: string | null;
  reason?: string | null;
  locked?: boolean;
}

/** Sign-up data that fails a uniqueness (or other) check; carries Mastodon's per-field details. */
export class AccountValidationError extends ValidationError {
  readonly problems: FieldProblems;
  constructor(problems: FieldProblems) {
    super(fullMessages(problems), problems);
    this.problems = problems;
  }
}

export async function findLocalAccountByUsername(core: Core, username: string): Promise<AccountDoc | null> {
  return collection(core.db, accounts).findOne({ usernameLower: username.toLowerCase(), domain: null });
}

/** The id of the user whose e-mail address is `email` (case-insensitive); null when none is. */
export async function userIdByEmail(core: Core, email: string): Promise<Id | null> {
  const user = await collection(core.db, users).findOne(
    { emailLower: email.toLowerCase() },
    { projection: { _id: 1 } },
  );
  return user?._id ?? null;
}

/** `taken` problems of a username and an e-mail address. */
export async function uniquenessProblems(core: Core, username: string, email: string): Promise<FieldProblems> {
  const out: FieldProblems = {};
  if (await findLocalAccountByUsername(core, username)) out.username = [taken()];
  if ((await userIdByEmail(core, email)) !== null) out.email = [taken()];
  return out;
}

export interface CreatedLocalAccount {
  account: AccountDoc;
  user: UserDoc;
}

/** Creates account + user. Field validation (format, agreement) is the caller's; uniqueness is checked here. */
export async function createLocalAccount(core: Core, input: NewLocalAccount): Promise<CreatedLocalAccount> {
  const problems = await uniquenessProblems(core, input.username, input.email);
  if (Object.keys(problems).length > 0) throw new AccountValidationError(problems);

  const [keys, passwordHash, accountId, userId] = await Promise.all([
    generateActorKeyPair(),
    hashPassword(input.password),
    nextSerialId(core.db, 'accounts'),
    nextSerialId(core.db, 'users'),
  ]);
  const now = new Date();
  const confirmed = input.confirmed ?? false;
  const approved = input.approved ?? true;
  const urls = localActorUrls(core.config, input.username);
  const account: AccountDoc = {
    _id: accountId,
    username: input.username,
    usernameLower: input.username.toLowerCase(),
    domain: null,
    ...blankProfile(),
    locked: input.locked ?? false,
    bot: false,
    group: false,
    discoverable: false,
    indexable: false,
    hideCollections: false,
    ...urls,
    publicKeyPem: keys.publicKeyPem,
    privateKeyPem: keys.privateKeyPem,
    followersCount: 0,
    followingCount: 0,
    statusesCount: 0,
    lastStatusAt: null,
    suspendedAt: null,
    silencedAt: null,
    memorial: false,
    movedToAccountId: null,
    pendingUser: !confirmed || !approved,
    // Nobody blocks, mutes or lists an account before it exists (feeds/fanOutFilters.ts).
    fanOutFilters: false,
    createdAt: now,
    updatedAt: now,
  };
  const confirmationToken = confirmed ? null : newSecret();
  const user: UserDoc = {
    _id: userId,
    accountId,
    email: input.email,
    emailLower: input.email.toLowerCase(),
    unconfirmedEmail: null,
    passwordHash,
    confirmedAt: confirmed ? now : null,
    confirmationTokenHash: confirmationToken ? hashSecret(confirmationToken) : null,
    confirmationSentAt: confirmationToken ? now : null,
    approved,
    disabled: false,
    roleId: input.roleId ?? null,
    locale: input.locale ?? null,
    createdByAppId: input.createdByAppId ?? null,
    signUpIp: input.signUpIp ?? null,
    signUpReason: input.reason ?? null,
    settings: { defaultPrivacy: 'public', defaultSensitive: false, defaultLanguage: null },
    lastSignInAt: null,
    createdAt: now,
    updatedAt: now,
  };

  const events: NewEvent[] = [
    {
      type: 'AccountCreated',
      key: String(accountId),
      payload: {
        accountId: String(accountId),
        userId: String(userId),
        username: account.username,
        domain: null,
        approvalRequired: !approved,
      },
      verify: { collection: users.name, filter: { _id: userId }, expect: 'exists' },
    } satisfies NewEvent<'AccountCreated'>,
  ];
  if (confirmationToken) events.push(confirmationMailEvent(core, user, account, confirmationToken));

  try {
    await core.outbox.write(events, async () => {
      await collection(core.db, accounts).insertOne(account);
      try {
        await collection(core.db, users).insertOne(user);
      } catch (err) {
        await collection(core.db, accounts).deleteOne({ _id: accountId });
        throw err;
      }
    });
  } catch (err) {
    // Lost a race with a concurrent sign-up for the same name or address.
    if (isDuplicateKeyError(err)) {
      const again = await uniquenessProblems(core, input.username, input.email);
      throw new AccountValidationError(Object.keys(again).length ? again : { username: [taken()] });
    }
    throw err;
  }
  // A new user's (empty) home feed is current: fan-out feeds it from now on.
  await markActive(core, [accountId], 'ok');
  return { account, user };
}
