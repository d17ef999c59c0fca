// Test fixtures built through the real domain code: users with apps and tokens, app-only tokens,
// and a listening API server. Use them instead of writing documents by hand.
import { randomBytes } from 'node:crypto';
import type { Core } from '../../services/core/context.ts';
import type { AccountDoc } from '../../services/core/model/accounts.ts';
import type { UserDoc } from '../../services/core/model/users.ts';
import type { AppDoc } from '../../services/core/model/oauth.ts';
import { createLocalAccount } from '../../services/core/accounts/create.ts';
import { createApp } from '../../services/core/oauth/apps.ts';
import { issueAccessToken } from '../../services/core/oauth/tokens.ts';
import { findRoleByName } from '../../services/core/roles/roles.ts';
import { buildApi, type Api } from '../../services/api/app.ts';

export const TEST_PASSWORD = 'correct horse battery staple';

export interface TestUserOptions {
  username?: string;
  email?: string;
  password?: string;
  /** Default true. */
  confirmed?: boolean;
  /** Default true. */
  approved?: boolean;
  locked?: boolean;
  /** Default ['read', 'write', 'follow', 'push']. */
  scopes?: string[];
  /** Role name: Owner, Admin, Moderator or a custom role's name. */
  role?: string;
}

export interface TestUser {
  account: AccountDoc;
  user: UserDoc;
  app: AppDoc;
  token: string;
  password: string;
}

export interface TestApp {
  app: AppDoc;
  clientId: string;
  clientSecret: string;
  /** An app-level token (client-credentials grant). */
  token: string;
}

let counter = 0;
function uniqueUsername(): string {
  counter += 1;
  return `user${counter}_${randomBytes(3).toString('hex')}`;
}

export async function createTestApp(
  core: Core,
  opts: { name?: string; scopes?: string[]; redirectUris?: string[]; website?: string | null } = {},
): Promise<TestApp> {
  const scopes = opts.scopes ?? ['read', 'write', 'follow', 'push'];
  const { app, clientSecret } = await createApp(core, {
    name: opts.name ?? 'Test app',
    redirectUris: opts.redirectUris ?? ['urn:ietf:wg:oauth:2.0:oob'],
    scopes,
    website: opts.website ?? null,
  });
  const issued = await issueAccessToken(core, { appId: app._id, userId: null, scopes, reuse: false });
  return { app, clientId: app.clientId, clientSecret, token: issued.token };
}

export async function createTestUser(core: Core, opts: TestUserOptions = {}): Promise<TestUser> {
  const username = opts.username ?? uniqueUsername();
  const password = opts.password ?? TEST_PASSWORD;
  const scopes = opts.scopes ?? ['read', 'write', 'follow', 'push'];
  let roleId = null;
  if (opts.role) {
    const role = await findRoleByName(core, opts.role);
    if (!role) throw new Error(`createTestUser: no role named ${opts.role}`);
    roleId = role._id;
  }
  const { app } = await createApp(core, {
    name: `${username}'s app`,
    redirectUris: ['urn:ietf:wg:oauth:2.0:oob'],
    scopes,
    website: null,
  });
  const { account, user } = await createLocalAccount(core, {
    username,
    email: opts.email ?? `${username.toLowerCase()}@example.test`,
    password,
    confirmed: opts.confirmed ?? true,
    approved: opts.approved ?? true,
    locked: opts.locked ?? false,
    roleId,
    createdByAppId: app._id,
    locale: 'en',
  });
  const issued = await issueAccessToken(core, { appId: app._id, userId: user._id, scopes, reuse: false });
  return { account, user, app, token: issued.token, password };
}

export interface TestServer {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  app: Api;
  close(): Promise<void>;
}

export async function startTestServer(core: Core): Promise<TestServer> {
  const app = await buildApi(core);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('test server has no TCP address');
  return { url: `http://127.0.0.1:${address.port}`, app, close: () => app.close() };
}
