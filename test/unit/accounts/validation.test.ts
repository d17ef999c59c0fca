import {
  validateSignUp,
  validateUsername,
  isValidEmail,
  fullMessages,
} from '../../../services/core/accounts/validation.ts';
import { validateProfile } from '../../../services/core/accounts/profile.ts';

const good = {
  username: 'alice_1',
  email: 'alice@example.com',
  password: 'long enough',
  agreement: true,
  locale: 'en',
};

describe('sign-up validation', () => {
  it('accepts valid data', () => {
    expect(validateSignUp(good)).toEqual({});
    expect(validateSignUp({ ...good, locale: null })).toEqual({});
    expect(validateSignUp({ ...good, locale: 'pt-BR' })).toEqual({});
  });

  it('gives Mastodon error codes per field', () => {
    expect(validateSignUp({ ...good, username: '' }).username).toEqual([
      { error: 'ERR_BLANK', description: "can't be blank" },
    ]);
    expect(validateSignUp({ ...good, username: 'a.b' }).username?.[0].error).toBe('ERR_INVALID');
    expect(validateSignUp({ ...good, username: 'x'.repeat(31) }).username?.[0].error).toBe('ERR_TOO_LONG');
    expect(validateSignUp({ ...good, username: 'x'.repeat(30) })).toEqual({});
    expect(validateSignUp({ ...good, username: 'Admin' }).username?.[0].error).toBe('ERR_RESERVED');
    expect(validateSignUp({ ...good, email: 'no-at-sign' }).email?.[0].error).toBe('ERR_INVALID');
    expect(validateSignUp({ ...good, password: 'x'.repeat(7) }).password?.[0].error).toBe('ERR_TOO_SHORT');
    expect(validateSignUp({ ...good, password: 'x'.repeat(8) })).toEqual({});
    expect(validateSignUp({ ...good, password: 'x'.repeat(72) })).toEqual({});
    expect(validateSignUp({ ...good, password: 'x'.repeat(73) }).password?.[0].error).toBe('ERR_TOO_LONG');
    expect(validateSignUp({ ...good, agreement: false }).agreement).toEqual([
      { error: 'ERR_ACCEPTED', description: 'must be accepted' },
    ]);
    // A locale Mastodon does not know is dropped at sign-up, never a validation error.
    expect(validateSignUp({ ...good, locale: 'not a locale' })).toEqual({});
    // A blank e-mail is blank and invalid, as Mastodon's presence and address validators say.
    expect(validateSignUp({ ...good, email: '' }).email).toEqual([
      { error: 'ERR_BLANK', description: "can't be blank" },
      { error: 'ERR_INVALID', description: 'is invalid' },
    ]);
  });

  it('accepts letters, digits and underscores only in usernames', () => {
    for (const ok of ['a', 'A_b_9', '_x_']) expect(validateUsername(ok)).toEqual({});
    for (const bad of ['a-b', 'a b', 'ä', 'a@b', 'a.b'])
      expect(validateUsername(bad).username?.[0].error).toBe('ERR_INVALID');
  });

  it('checks e-mail syntax', () => {
    expect(isValidEmail('a.b+c@sub.example.org')).toBe(true);
    for (const bad of [
      'a@b',
      '@example.com',
      'a@@example.com',
      'a b@example.com',
      'a@-example.com',
      'a%b@example.com',
      'a,b@example.com',
      `${'x'.repeat(320)}@example.com`,
    ]) {
      expect(isValidEmail(bad)).toBe(false);
    }
  });

  it('writes Rails-style full messages', () => {
    expect(fullMessages(validateSignUp({ ...good, username: '', agreement: false }))).toBe(
      "Username can't be blank, Agreement must be accepted",
    );
  });
});

describe('profile validation', () => {
  it('enforces the bio, display name and field limits', () => {
    expect(validateProfile({ note: 'x'.repeat(500), displayName: 'y'.repeat(30) })).toEqual([]);
    expect(validateProfile({ note: 'x'.repeat(501) })).toEqual(['Note is too long (maximum is 500 characters)']);
    expect(validateProfile({ displayName: 'y'.repeat(31) })).toEqual([
      'Display name is too long (maximum is 30 characters)',
    ]);
    // Characters, not UTF-16 units: 500 emoji fit.
    expect(validateProfile({ note: '😀'.repeat(500) })).toEqual([]);
    expect(validateProfile({ fields: Array.from({ length: 5 }, () => ({ name: 'a', value: 'b' })) })).toEqual([
      'Fields is too long (maximum is 4 fields)',
    ]);
    expect(validateProfile({ fields: [{ name: 'a'.repeat(256), value: '' }] })).toHaveLength(1);
    expect(validateProfile({ privacy: 'direct' })).toEqual(['Setting default privacy is not included in the list']);
    expect(validateProfile({ privacy: 'private', language: 'de' })).toEqual([]);
    expect(validateProfile({ language: 'german' })).toEqual(['Setting default language is not included in the list']);
  });
});
