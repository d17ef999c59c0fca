// OAuth applications (POST /api/v1/apps): validation like Mastodon's (Doorkeeper) and creation.
import { timingSafeEqual } from 'node:crypto';
import type { Core } from '../context.ts';
import { ValidationError } from '../errors.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { apps, type AppDoc } from '../model/oauth.ts';
import { newSecret, hashSecret } from '../auth/tokens.ts';
import { isKnownScope } from '../auth/scopes.ts';

export const OOB_REDIRECT_URI = 'urn:ietf:wg:oauth:2.0:oob';
export const APP_NAME_MAX = 60;
const URL_MAX = 2000;

export class AppValidationError extends ValidationError {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** An absolute redirect URI without fragment (custom schemes allowed, as apps use them), or oob. */
export function isValidRedirectUri(uri: string): boolean {
  if (uri === OOB_REDIRECT_URI) return true;
  if (uri.length > URL_MAX) return false;
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return false;
  }
  if (parsed.hash) return false;
  // javascript:/data: would run in the browser on redirect.
  return !/^(javascript|data|vbscript|file):$/i.test(parsed.protocol);
}

export interface NewApp {
  name: string;
  redirectUris: string[];
  scopes: string[];
  website: string | null;
  ownerUserId?: Id | null;
}

export function validateApp(input: NewApp): void {
  const name = input.name.trim();
  if (!name) throw new AppValidationError('name', "Name can't be blank");
  if (name.length > APP_NAME_MAX)
    throw new AppValidationError('name', `Name is too long (maximum is ${APP_NAME_MAX} characters)`);
  if (input.redirectUris.length === 0) throw new AppValidationError('redirect_uri', "Redirect URI can't be blank");
  if (input.redirectUris.length > 20) throw new AppValidationError('redirect_uri', 'Redirect URI has too many entries');
  for (const uri of input.redirectUris) {
    if (!isValidRedirectUri(uri)) throw new AppValidationError('redirect_uri', 'Redirect URI must be an absolute URI.');
  }
  for (const s of input.scopes) {
    if (!isKnownScope(s)) throw new AppValidationError('scopes', 'Scopes must be a valid set of scopes');
  }
  if (input.website !== null) {
    if (input.website.length > URL_MAX || !/^https?:\/\/\S+$/i.test(input.website)) {
      throw new AppValidationError('website', 'Website is invalid');
    }
  }
}

/** Creates an app; the client secret is returned once and stored hashed. */
export async function createApp(core: Core, input: NewApp): Promise<{ app: AppDoc; clientSecret: string }> {
  validateApp(input);
  const clientSecret = newSecret();
  const app: AppDoc = {
    _id: await nextSerialId(core.db, 'oauth_apps'),
    name: input.name.trim(),
    website: input.website,
    redirectUris: [...new Set(input.redirectUris)],
    scopes: [...new Set(input.scopes)],
    clientId: newSecret(),
    clientSecret: hashSecret(clientSecret),
    ownerUserId: input.ownerUserId ?? null,
    createdAt: new Date(),
  };
  await collection(core.db, apps).insertOne(app);
  return { app, clientSecret };
}

export async function findAppByClientId(core: Core, clientId: string): Promise<AppDoc | null> {
  if (typeof clientId !== 'string' || clientId.length > 200) return null;
  return collection(core.db, apps).findOne({ clientId });
}

export async function findAppById(core: Core, id: Id): Promise<AppDoc | null> {
  return collection(core.db, apps).findOne({ _id: id });
}

export function clientSecretMatches(app: AppDoc, secret: string): boolean {
  const a = Buffer.from(hashSecret(secret));
  const b = Buffer.from(app.clientSecret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The first redirect URI a browser can be sent to (not oob), for the post-confirmation redirect. */
export function browserRedirectUri(app: AppDoc): string | null {
  return app.redirectUris.find((u) => u !== OOB_REDIRECT_URI) ?? null;
}
