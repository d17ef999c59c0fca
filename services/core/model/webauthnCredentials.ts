// Security keys (Mastodon's WebauthnCredential): a WebAuthn credential a user registered as a
// second factor, by the id the authenticator gave it.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface WebauthnCredentialDoc {
  _id: Id;
  userId: Id;
  /** The credential id, base64url. */
  externalId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  signCount: number;
  nickname: string;
  transports: string[];
  createdAt: Date;
}

export const webauthnCredentials = defineCollection<WebauthnCredentialDoc>('webauthn_credentials', [
  { key: { externalId: 1 }, name: 'external_id', unique: true },
  { key: { userId: 1, nickname: 1 }, name: 'user_nickname', unique: true },
]);
