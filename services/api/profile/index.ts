// The signed-in user's own profile (Mastodon 4.6): GET and PATCH /api/v1/profile answer the
// Profile entity (the values as written, images null when unset, the profile-tab settings).
// PATCH takes update_credentials' parameters; the actor's Update goes out as from there.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { updateProfile } from '../../core/accounts/profile.ts';
import { ProfileEntity, presentProfile } from '../../core/entities/profile.ts';
import { requireUser } from '../plugins/auth.ts';
import { UpdateBody, profileChangesOf } from '../accounts/profileChanges.ts';

const profileArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/profile',
    {
      schema: { response: { 200: ProfileEntity } },
      config: { auth: { scopes: ['profile', 'read', 'read:accounts'], user: 'required' } },
    },
    async (request) => presentProfile(core, requireUser(request).account),
  );

  app.patch(
    '/api/v1/profile',
    {
      schema: { body: UpdateBody, response: { 200: ProfileEntity } },
      config: { auth: { scopes: ['write', 'write:accounts'], user: 'required' } },
    },
    async (request) => {
      const { account, user } = requireUser(request);
      const updated = await updateProfile(core, account, user, profileChangesOf(request.body, request.uploads));
      return presentProfile(core, updated.account);
    },
  );
};

export default profileArea;
