// Pages behind a log-in: the signed-in user and account, or a redirect to the log-in form (that
// returns here), or the page saying why this login may not be used.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { Core } from '../core/context.ts';
import type { UserDoc } from '../core/model/users.ts';
import type { AccountDoc } from '../core/model/accounts.ts';
import { findAccount } from '../core/accounts/queries.ts';
import { loginRefusal } from '../core/users/login.ts';
import { translator } from './i18n.ts';
import { sessionUser } from './session.ts';
import { twoFactorSetupRequired } from '../core/users/twoFactor.ts';

export const TWO_FACTOR_METHODS = '/settings/two_factor_authentication_methods';
import { messagePage, refusalMessage } from './pages.ts';

/** Who is signed in: the login and its account. */
export interface SignedIn {
  user: UserDoc;
  account: AccountDoc;
}

export async function requireSignedIn(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  returnTo: string,
  opts: { twoFactorSetup?: boolean } = {},
): Promise<SignedIn | null> {
  const user = await sessionUser(core, request);
  const account = user ? await findAccount(core, user.accountId) : null;
  if (!user || !account) {
    reply.redirect(`/auth/sign_in?return_to=${encodeURIComponent(returnTo)}`, 303);
    return null;
  }
  const refusal = await loginRefusal(core, user);
  if (refusal) {
    await messagePage(reply, core, {
      status: 403,
      title: 'errors.title',
      lines: [refusalMessage(translator('en'), refusal)],
    });
    return null;
  }
  // A role that requires two-factor authentication sends its users to set it up first.
  if (!opts.twoFactorSetup && (await twoFactorSetupRequired(core, user))) {
    reply.redirect(TWO_FACTOR_METHODS, 303);
    return null;
  }
  return { user, account };
}

/**
 * A page's handler behind the log-in: `run` is only called for a signed-in user (else the
 * log-in redirect back to `returnTo`, or the page saying why this login may not be used).
 */
export function asSignedIn<G extends RouteGenericInterface = RouteGenericInterface>(
  core: Core,
  where: string | { returnTo: string; twoFactorSetup?: boolean },
  run: (request: FastifyRequest<G>, reply: FastifyReply, signedIn: SignedIn) => Promise<unknown>,
): (request: FastifyRequest<G>, reply: FastifyReply) => Promise<unknown> {
  const { returnTo, ...opts } = typeof where === 'string' ? { returnTo: where } : where;
  return async (request, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, returnTo, opts);
    return signedIn ? run(request, reply, signedIn) : reply;
  };
}

type SignedInHandler = (request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn) => Promise<unknown>;

/**
 * A page behind the log-in whose form posts back to it, at its literal `path`: GET shows the page,
 * POST (CSRF-checked) submits the form; signing in returns to the page.
 */
export function signedInForm(
  app: FastifyInstance,
  core: Core,
  path: string,
  page: { show: SignedInHandler; submit: SignedInHandler },
): void {
  app.get(path, asSignedIn(core, path, page.show));
  app.post(path, { preHandler: app.csrfProtection }, asSignedIn(core, path, page.submit));
}
