// Accounts area: sign-up, the own profile (verify/update credentials, avatar/header removal),
// reading accounts (by id, several ids, lookup by acct) and the placeholder images.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import { parseId, type Id } from '../../core/ids.ts';
import type { FastifyRequest } from 'fastify';
import { withViewerFeatureApproval, withViewerFeatureApprovalOne } from '../../core/entities/accountViewer.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { signUp } from '../../core/accounts/registration.ts';
import { updateProfile, removeProfileImage } from '../../core/accounts/profile.ts';
import {
  findAccountByAcct,
  findVisibleAccount,
  findVisibleAccounts,
  movedToAccount,
} from '../../core/accounts/queries.ts';
import { resolveAccountByAcct } from '../../core/activitypub/resolve.ts';
import { tokenEntity } from '../../core/oauth/tokens.ts';
import { followRequestsCount } from '../../core/graph/followRequests.ts';
import { requireUser } from '../plugins/auth.ts';
import {
  AccountEntity,
  CredentialAccountEntity,
  presentAccount,
  presentAccounts,
  presentCredentialAccount,
} from '../../core/entities/account.ts';
import { ApiError, forbidden, missingParam, notFound } from '../errors.ts';
import { enforceRateLimit, RATE_LIMITS } from '../rateLimit.ts';
import { BoolLike, railsBoolean } from './params.ts';
import { placeholderImage } from './placeholders.ts';
import { UpdateBody, profileChangesOf } from './profileChanges.ts';
import { IdParams } from '../params.ts';

const TokenEntity = Type.Object({
  access_token: Type.String(),
  token_type: Type.String(),
  scope: Type.String(),
  created_at: Type.Integer(),
});

const SignUpBody = Type.Object(
  {
    username: Type.Optional(Type.String({ maxLength: 1000 })),
    email: Type.Optional(Type.String({ maxLength: 1000 })),
    password: Type.Optional(Type.String({ maxLength: 1000 })),
    agreement: Type.Optional(BoolLike),
    locale: Type.Optional(Type.String({ maxLength: 100 })),
    reason: Type.Optional(Type.String({ maxLength: 10_000 })),
    date_of_birth: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: true },
);

async function credentialAccountOf(
  core: Core,
  account: AccountDoc,
  user: Parameters<typeof presentCredentialAccount>[2],
) {
  const own = await presentCredentialAccount(core, account, user, {
    followRequestsCount: account.locked ? await followRequestsCount(core, account._id) : 0,
  });
  return withViewerFeatureApprovalOne(core, own, account._id);
}

function viewerIdOf(request: FastifyRequest): Id | null {
  return request.auth?.account?._id ?? null;
}

const accountsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/accounts',
    {
      schema: { body: SignUpBody, response: { 200: TokenEntity } },
      config: { auth: { scopes: ['write', 'write:accounts'], user: 'app' } },
    },
    async (request, reply) => {
      const auth = request.auth!;
      // Only an app token (client-credentials grant) may create accounts.
      if (auth.user) throw forbidden('This method requires an app token');
      if (core.config.omniauthOnly) throw forbidden();
      await enforceRateLimit(core, reply, RATE_LIMITS.signUp, request.ip);
      const body = request.body;
      const issued = await signUp(core, {
        username: (body.username ?? '').trim(),
        email: (body.email ?? '').trim(),
        password: body.password ?? '',
        agreement: railsBoolean(body.agreement) === true,
        locale: body.locale?.trim() ? body.locale.trim() : null,
        reason: body.reason ?? null,
        app: auth.app,
        scopes: auth.token.scopes,
        ip: request.ip,
      });
      return tokenEntity(issued);
    },
  );

  app.get(
    '/api/v1/accounts/verify_credentials',
    {
      schema: { response: { 200: CredentialAccountEntity } },
      config: { auth: { scopes: ['read', 'read:accounts', 'profile'], user: 'required' } },
    },
    async (request) => {
      const { account, user } = requireUser(request);
      return credentialAccountOf(core, account, user);
    },
  );

  app.patch(
    '/api/v1/accounts/update_credentials',
    {
      schema: { body: UpdateBody, response: { 200: CredentialAccountEntity } },
      config: { auth: { scopes: ['write', 'write:accounts'], user: 'required' } },
    },
    async (request) => {
      const { account, user } = requireUser(request);
      const changes = profileChangesOf(request.body, request.uploads);
      const updated = await updateProfile(core, account, user, changes);
      return credentialAccountOf(core, updated.account, updated.user);
    },
  );

  for (const [path, kind] of [
    ['/api/v1/profile/avatar', 'avatar'],
    ['/api/v1/profile/header', 'header'],
  ] as const) {
    app.delete(
      path,
      {
        schema: { response: { 200: CredentialAccountEntity } },
        config: { auth: { scopes: ['write', 'write:accounts'], user: 'required' } },
      },
      async (request) => {
        const { account, user } = requireUser(request);
        return credentialAccountOf(core, await removeProfileImage(core, account, kind), user);
      },
    );
  }

  app.get(
    '/api/v1/accounts/lookup',
    {
      schema: {
        querystring: Type.Object(
          { acct: Type.Optional(Type.String({ maxLength: 500 })) },
          { additionalProperties: true },
        ),
        response: { 200: AccountEntity },
      },
      config: { auth: { scopes: ['read', 'read:accounts'], user: 'optional' } },
    },
    async (request) => {
      const acct = request.query.acct?.trim();
      if (!acct) throw missingParam('acct');
      // Lookup is the one read that also finds unconfirmed and unapproved users; remote handles
      // are resolved (WebFinger, then the actor) when unknown.
      const account = (await findAccountByAcct(core, acct)) ?? (await resolveAccountByAcct(core, acct));
      if (!account) throw notFound();
      return withViewerFeatureApprovalOne(core, await presentAccount(core, account), viewerIdOf(request));
    },
  );

  app.get(
    '/api/v1/accounts',
    {
      schema: {
        querystring: Type.Object(
          { id: Type.Optional(Type.Array(Type.String({ maxLength: 30 }), { maxItems: 1000 })) },
          { additionalProperties: true },
        ),
        response: { 200: Type.Array(AccountEntity) },
      },
      config: { auth: { scopes: ['read', 'read:accounts'], user: 'optional' } },
    },
    async (request) => {
      const ids = [...new Set((request.query.id ?? []).map(parseId).filter((id) => id !== null))];
      if (ids.length > 40) throw new ApiError(422, 'Validation failed: Too many ids (at most 40)');
      const list = await presentAccounts(core, await findVisibleAccounts(core, ids));
      return withViewerFeatureApproval(core, list, viewerIdOf(request));
    },
  );

  app.get(
    '/api/v1/accounts/:id',
    {
      schema: { params: IdParams, response: { 200: AccountEntity } },
      config: { auth: { scopes: ['read', 'read:accounts'], user: 'optional' } },
    },
    async (request) => {
      const id = parseId(request.params.id);
      const account = id === null ? null : await findVisibleAccount(core, id);
      if (!account) throw notFound();
      const moved = await movedToAccount(core, account);
      return withViewerFeatureApprovalOne(core, await presentAccount(core, account, { moved }), viewerIdOf(request));
    },
  );

  // Identity proofs were removed in Mastodon 3.5; the route stays and answers an empty list.
  app.get(
    '/api/v1/accounts/:id/identity_proofs',
    {
      schema: { params: IdParams, response: { 200: Type.Array(Type.Never()) } },
      config: { auth: { scopes: [], user: 'required' } },
    },
    async (request) => {
      const id = parseId(request.params.id);
      if (id === null || !(await findVisibleAccount(core, id))) throw notFound();
      return [];
    },
  );

  for (const [path, kind] of [
    ['/avatars/original/missing.png', 'avatar'],
    ['/headers/original/missing.png', 'header'],
  ] as const) {
    app.get(path, async (_request, reply) => {
      reply.header('content-type', 'image/png').header('cache-control', 'public, max-age=31536000, immutable');
      return reply.send(await placeholderImage(kind));
    });
  }
};

export default accountsArea;
