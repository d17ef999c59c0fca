// OAuth applications, authorization codes and access tokens. Secrets are stored as sha256 hashes:
// a database leak does not leak working tokens.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { defineDocView } from '../db/docViews.ts';

export interface AppDoc {
  _id: Id;
  name: string;
  website: string | null;
  redirectUris: string[];
  scopes: string[];
  clientId: string;
  clientSecret: string;
  /** Set for apps made by a user in settings; null for API-registered apps. */
  ownerUserId: Id | null;
  createdAt: Date;
}

export interface AuthorizationCodeDoc {
  _id: Id;
  codeHash: string;
  appId: Id;
  userId: Id;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | null;
  expiresAt: Date;
  usedAt: Date | null;
  /** The token the code was exchanged for: revoked when the code is replayed (RFC 6749 §4.1.2). */
  issuedTokenId?: Id | null;
  createdAt: Date;
}

export interface AccessTokenDoc {
  _id: Id;
  tokenHash: string;
  /**
   * The token encrypted under a key derived from SECRET_KEY_BASE, so an identical grant can hand the
   * same token back (Doorkeeper's reuse_access_token) while a database leak alone leaks no token.
   */
  tokenSealed: string | null;
  appId: Id;
  /** null for app tokens (client-credentials grant). */
  userId: Id | null;
  scopes: string[];
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export const apps = defineCollection<AppDoc>('oauth_apps', [{ key: { clientId: 1 }, name: 'client_id', unique: true }]);

export const authorizationCodes = defineCollection<AuthorizationCodeDoc>('oauth_codes', [
  { key: { codeHash: 1 }, name: 'code', unique: true },
]);

/**
 * One document per exchanged code (`_id` = the code's id): the unique insert makes a code single-use
 * even where conditional updates are not atomic (the MongoDB-wire stand-in loses concurrent updates).
 */
export const authorizationCodeUses = defineCollection<{ _id: Id; usedAt: Date }>('oauth_code_uses');

export const accessTokens = defineCollection<AccessTokenDoc>(
  'oauth_tokens',
  [
    { key: { tokenHash: 1 }, name: 'token', unique: true },
    { key: { appId: 1, userId: 1 }, name: 'app_user' },
  ],
  { cachedById: true },
);

/** Access tokens by id, cached in Redis (their writes drop the copy, so a revocation counts at once). */
// Read on every authenticated request: the same bytes are parsed once (docCache.ts; frozen copies).
export const accessTokenView = defineDocView(accessTokens, 't', [], { shareParsed: true });
