// Application / CredentialApplication entities (mastodon-api-entities.md §11), and the reduced
// `{name, website}` form embedded in statuses.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { AppDoc } from '../model/oauth.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

const applicationProperties = {
  id: Type.String(),
  name: Type.String(),
  website: NullableString,
  scopes: Type.Array(Type.String()),
  redirect_uris: Type.Array(Type.String()),
  redirect_uri: Type.String(),
  vapid_key: Type.Optional(Type.String()),
};

export const ApplicationEntity = Type.Object(applicationProperties);
export type Application = Static<typeof ApplicationEntity>;

export const CredentialApplicationEntity = Type.Object({
  ...applicationProperties,
  client_id: Type.String(),
  client_secret: Type.String(),
  client_secret_expires_at: Type.Integer(),
});
export type CredentialApplication = Static<typeof CredentialApplicationEntity>;

/** The application as embedded in a Status (`application`). */
export const StatusApplicationEntity = Type.Object({ name: Type.String(), website: NullableString });
export type StatusApplication = Static<typeof StatusApplicationEntity>;

export function presentApplication(core: Core, app: AppDoc): Application {
  const out: Application = {
    id: String(app._id),
    name: app.name,
    website: app.website,
    scopes: app.scopes,
    redirect_uris: app.redirectUris,
    redirect_uri: app.redirectUris.join('\n'),
    // Deprecated since 4.3 but still read by clients for Web Push: the instance's VAPID public key
    // (as in the instance entity's configuration.vapid.public_key).
    vapid_key: core.vapid.publicKey,
  };
  return out;
}

export function presentCredentialApplication(core: Core, app: AppDoc, clientSecret: string): CredentialApplication {
  return {
    ...presentApplication(core, app),
    client_id: app.clientId,
    client_secret: clientSecret,
    client_secret_expires_at: 0,
  };
}

export function presentStatusApplication(app: Pick<AppDoc, 'name' | 'website'>): StatusApplication {
  return { name: app.name, website: app.website };
}
