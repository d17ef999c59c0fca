// Sign-up validation like Mastodon's (User/Account validators), producing its per-field error
// codes. Pure: uniqueness checks against the database happen in registration.ts.
import { PASSWORD_MAX, PASSWORD_MIN } from '../users/passwords.ts';

export interface FieldProblem {
  error: string;
  description: string;
}

export type FieldProblems = Record<string, FieldProblem[]>;

export const USERNAME_MAX = 30;
export const EMAIL_MAX = 320;

/** Mastodon's ReservedUsernameValidator list plus names our own routes and actors use. */
export const RESERVED_USERNAMES = new Set([
  'admin',
  'support',
  'help',
  'root',
  'webmaster',
  'administrator',
  'mod',
  'moderator',
  'postmaster',
  'abuse',
  'security',
  'noreply',
  'no_reply',
  'instance_actor',
  'actor',
  'mastodon',
  'about',
  'api',
  'auth',
  'oauth',
  'settings',
  'users',
  'inbox',
  'outbox',
  'system',
]);

const LOCAL_USERNAME = /^[a-z0-9_]+$/i;
// Pragmatic address syntax (what HTML's type=email accepts): one @, a dotted domain, no spaces.
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;

export const blank = (): FieldProblem => ({ error: 'ERR_BLANK', description: "can't be blank" });
export const invalid = (): FieldProblem => ({ error: 'ERR_INVALID', description: 'is invalid' });
export const taken = (): FieldProblem => ({ error: 'ERR_TAKEN', description: 'has already been taken' });
export const tooLong = (max: number): FieldProblem => ({
  error: 'ERR_TOO_LONG',
  description: `is too long (maximum is ${max} characters)`,
});
export const tooShort = (min: number): FieldProblem => ({
  error: 'ERR_TOO_SHORT',
  description: `is too short (minimum is ${min} characters)`,
});

function add(out: FieldProblems, field: string, problem: FieldProblem): void {
  (out[field] ??= []).push(problem);
}

export function isValidEmail(email: string): boolean {
  // Mastodon's EmailAddressValidator also refuses `%`, `,` and `"`.
  return email.length <= EMAIL_MAX && EMAIL.test(email) && !/[%,"]/.test(email);
}

export function validateUsername(username: string, out: FieldProblems = {}): FieldProblems {
  if (!username) add(out, 'username', blank());
  else {
    if (!LOCAL_USERNAME.test(username)) add(out, 'username', invalid());
    if (username.length > USERNAME_MAX) add(out, 'username', tooLong(USERNAME_MAX));
    if (RESERVED_USERNAMES.has(username.toLowerCase()))
      add(out, 'username', { error: 'ERR_RESERVED', description: 'is reserved' });
  }
  return out;
}

export interface SignUpInput {
  username: string;
  email: string;
  password: string;
  agreement: boolean;
  locale: string | null;
  reason?: string | null;
}

/** Field problems of a sign-up, before uniqueness checks; empty when valid. */
export function validateSignUp(input: SignUpInput): FieldProblems {
  const out: FieldProblems = {};
  validateUsername(input.username, out);
  // Mastodon validates presence and the address itself, so a blank e-mail is both blank and invalid.
  if (!input.email) add(out, 'email', blank());
  if (!isValidEmail(input.email)) add(out, 'email', invalid());
  if (!input.password) add(out, 'password', blank());
  else if (input.password.length < PASSWORD_MIN) add(out, 'password', tooShort(PASSWORD_MIN));
  else if (input.password.length > PASSWORD_MAX) add(out, 'password', tooLong(PASSWORD_MAX));
  if (!input.agreement) add(out, 'agreement', { error: 'ERR_ACCEPTED', description: 'must be accepted' });
  // No locale problem: Mastodon normalises a locale it does not know to none (registration.ts).
  if (input.reason && input.reason.length > 1000) add(out, 'reason', tooLong(1000));
  return out;
}

const FIELD_LABELS: Record<string, string> = {
  username: 'Username',
  email: 'Email',
  password: 'Password',
  agreement: 'Agreement',
  locale: 'Locale',
  reason: 'Reason',
};

/** Rails-style full message: "Username has already been taken, Email is invalid". */
export function fullMessages(problems: FieldProblems): string {
  return Object.entries(problems)
    .flatMap(([field, list]) => list.map((p) => `${FIELD_LABELS[field] ?? field} ${p.description}`))
    .join(', ');
}
