// Users: the local log-in behind a local account.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { defineDocView } from '../db/docViews.ts';

export type PostingPrivacy = 'public' | 'unlisted' | 'private' | 'direct';

export interface UserDoc {
  _id: Id;
  accountId: Id;
  email: string;
  emailLower: string;
  /** Pending new address while unconfirmed (POST /api/v1/emails/confirmations with `email`). */
  unconfirmedEmail: string | null;
  passwordHash: string;
  confirmedAt: Date | null;
  /** sha256 of the token in the e-mailed confirmation link; null once used. */
  confirmationTokenHash: string | null;
  confirmationSentAt: Date | null;
  /** sha256 of the token in the e-mailed password-reset link; null or absent when none is pending. */
  resetPasswordTokenHash?: string | null;
  resetPasswordSentAt?: Date | null;
  /** false while an administrator has to approve the sign-up (registrations mode "approved"). */
  approved: boolean;
  disabled: boolean;
  roleId: Id | null;
  locale: string | null;
  /** The app the user signed up through, for the redirect after confirmation. */
  createdByAppId: Id | null;
  signUpIp: string | null;
  /** Reason given at sign-up in approval mode. */
  signUpReason: string | null;
  settings: {
    defaultPrivacy: PostingPrivacy;
    defaultSensitive: boolean;
    defaultLanguage: string | null;
    /** Who may quote new posts by default (`source[quote_policy]`); absent: `public`, Mastodon's default. */
    defaultQuotePolicy?: 'public' | 'followers' | 'nobody';
    /** Languages the public and hashtag timelines and streams are limited to (Mastodon's chosen_languages); absent or empty: all. */
    chosenLanguages?: string[] | null;
    /** E-mail notification choices (Mastodon's notification_emails.*); a key absent has its default (core/users/notificationEmails.ts). */
    notificationEmails?: Partial<Record<string, boolean>>;
    /** E-mail notifications even while the user is online (Mastodon's always_send_emails); absent: off. */
    alwaysSendEmails?: boolean;
  };
  lastSignInAt: Date | null;
  /** Two-factor authentication (core/users/twoFactor.ts): on once a TOTP code confirmed the setup. */
  otpRequiredForLogin?: boolean;
  /** The TOTP secret, sealed under SECRET_KEY_BASE (core/oauth/seal.ts). */
  otpSecret?: string | null;
  /** The last TOTP time step used: no code works twice. */
  consumedTimestep?: number | null;
  /** sha256 of the recovery codes not used yet. */
  otpBackupCodes?: string[];
  createdAt: Date;
  updatedAt: Date;
}

export const users = defineCollection<UserDoc>(
  'users',
  [
    { key: { accountId: 1 }, name: 'account', unique: true },
    { key: { emailLower: 1 }, name: 'email', unique: true },
    { key: { confirmationTokenHash: 1 }, name: 'confirmation_token' },
    { key: { resetPasswordTokenHash: 1 }, name: 'reset_password_token' },
    { key: { roleId: 1 }, name: 'role' },
  ],
  { cachedById: true },
);

/** A user as the request authentication sees it (cached in Redis): no password or token hashes. */
// Read on every authenticated request: the same bytes are parsed once (docCache.ts; frozen copies).
export const userView = defineDocView(
  users,
  'u',
  ['passwordHash', 'confirmationTokenHash', 'resetPasswordTokenHash', 'otpSecret', 'otpBackupCodes'],
  { shareParsed: true },
);
export type CachedUser = Omit<
  UserDoc,
  'passwordHash' | 'confirmationTokenHash' | 'resetPasswordTokenHash' | 'otpSecret' | 'otpBackupCodes'
>;
