// Apps area: client registration (POST /api/v1/apps) and GET /api/v1/apps/verify_credentials.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { createApp } from '../../core/oauth/apps.ts';
import { parseScopes } from '../../core/auth/scopes.ts';
import {
  ApplicationEntity,
  CredentialApplicationEntity,
  presentApplication,
  presentCredentialApplication,
} from '../../core/entities/application.ts';
import { validationFailed } from '../errors.ts';

const StringOrList = Type.Union([Type.String(), Type.Array(Type.String())]);

const AppBody = Type.Object(
  {
    client_name: Type.Optional(Type.String({ maxLength: 1000 })),
    redirect_uris: Type.Optional(StringOrList),
    scopes: Type.Optional(Type.String({ maxLength: 4000 })),
    website: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: true },
);

function redirectList(value: string | string[] | undefined): string[] {
  const list = Array.isArray(value) ? value : (value ?? '').split(/\s+/);
  return list.map((s) => s.trim()).filter(Boolean);
}

const appsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/apps',
    { config: { auth: { user: 'none' } }, schema: { body: AppBody, response: { 200: CredentialApplicationEntity } } },
    async (request) => {
      const body = request.body;
      // Mastodon validates the Doorkeeper application model: 422, not a missing-parameter 400.
      if (!body.client_name?.trim()) throw validationFailed("Application name can't be blank");
      if (body.redirect_uris === undefined || redirectList(body.redirect_uris).length === 0)
        throw validationFailed("Redirect URI can't be blank");
      const { app: created, clientSecret } = await createApp(core, {
        name: body.client_name,
        redirectUris: redirectList(body.redirect_uris),
        scopes: parseScopes(body.scopes),
        website: body.website?.trim() ? body.website.trim() : null,
      });
      return presentCredentialApplication(core, created, clientSecret);
    },
  );

  app.get(
    '/api/v1/apps/verify_credentials',
    { schema: { response: { 200: ApplicationEntity } }, config: { auth: { user: 'app', scopes: [] } } },
    async (request) => presentApplication(core, request.auth!.app),
  );
};

export default appsArea;
