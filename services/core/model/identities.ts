// External identities (Mastodon's Identity): the account at an external log-in provider that a
// local user logs in with, by the provider's name and the subject it gives.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface IdentityDoc {
  _id: Id;
  /** `openid_connect`, as Mastodon names the strategy. */
  provider: string;
  /** The value of the configured uid claim (OIDC_UID_FIELD). */
  uid: string;
  userId: Id;
  createdAt: Date;
}

export const identities = defineCollection<IdentityDoc>('identities', [
  { key: { provider: 1, uid: 1 }, name: 'provider_uid', unique: true },
  { key: { userId: 1 }, name: 'user' },
]);
