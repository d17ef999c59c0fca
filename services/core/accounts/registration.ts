// Sign-up, by page (/auth/sign_up) and by API (POST /api/v1/accounts): registration mode, IP and
// e-mail rules, validation with Mastodon's per-field errors, the account + user (unconfirmed;
// unapproved in "approved" mode) and its confirmation mail; through the API also a user token for
// the app that signed the user up, with that app token's scopes.
import type { Core } from '../context.ts';
import { DomainError } from '../errors.ts';
import type { AppDoc } from '../model/oauth.ts';
import { getRegistrationsMode } from '../settings/settings.ts';
import { issueAccessToken, type IssuedToken } from '../oauth/tokens.ts';
import type { Id } from '../ids.ts';
import { createLocalAccount, AccountValidationError, uniquenessProblems, type CreatedLocalAccount } from './create.ts';
import { validateSignUp, isValidEmail, type SignUpInput } from './validation.ts';
import { checkEmail, blockedEmailProblem } from '../moderation/emailBlocks.ts';
import { signUpIpVerdict } from '../moderation/ipBlocks.ts';
import { normaliseLanguage } from '../statuses/postStatus.ts';

export class RegistrationsClosedError extends DomainError {
  constructor() {
    super(403, 'This action is not allowed', {}, {}, 'E_REGISTRATIONS_CLOSED');
  }
}

export async function signUp(
  core: Core,
  input: SignUpInput & { app: AppDoc; scopes: string[]; ip: string | null },
): Promise<IssuedToken> {
  const { user } = await registerUser(core, { ...input, appId: input.app._id });
  return issueAccessToken(core, { appId: input.app._id, userId: user._id, scopes: input.scopes, reuse: false });
}

/** Creates the account of a sign-up (`appId` null from the web page); throws the errors above. */
export async function registerUser(
  core: Core,
  input: SignUpInput & { appId: Id | null; ip: string | null },
): Promise<CreatedLocalAccount> {
  const mode = await getRegistrationsMode(core);
  if (core.config.omniauthOnly || mode === 'closed') throw new RegistrationsClosedError();
  // IP rules: refused outright, or into the approval queue.
  const ipVerdict = await signUpIpVerdict(core, input.ip);
  if (ipVerdict === 'blocked') throw new RegistrationsClosedError();
  const problems = validateSignUp(input);
  // E-mail rules: blocked domains (and their mail servers) and canonical addresses.
  const emailVerdict = isValidEmail(input.email) ? await checkEmail(core, input.email) : 'allowed';
  if (emailVerdict === 'blocked') problems.email = [...(problems.email ?? []), blockedEmailProblem()];
  if (Object.keys(problems).length > 0) {
    // Report every problem at once, "taken" included, as Rails validations do.
    const taken = await uniquenessProblems(core, input.username, input.email);
    for (const [field, list] of Object.entries(taken)) problems[field] = [...(problems[field] ?? []), ...list];
    const order = ['username', 'email', 'password', 'agreement', 'locale', 'reason'];
    const sorted = Object.fromEntries(Object.entries(problems).sort(([a], [b]) => order.indexOf(a) - order.indexOf(b)));
    throw new AccountValidationError(sorted);
  }
  return createLocalAccount(core, {
    username: input.username,
    email: input.email,
    password: input.password,
    // Mastodon's User normalises a locale it does not offer to none (no validation error).
    locale: normaliseLanguage(input.locale),
    confirmed: false,
    approved: mode !== 'approved' && ipVerdict !== 'requires_approval' && emailVerdict !== 'requires_approval',
    createdByAppId: input.appId,
    signUpIp: input.ip,
    reason: input.reason ?? null,
  });
}
