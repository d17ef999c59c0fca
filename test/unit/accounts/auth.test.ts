import {
  expandScopes,
  parseScopes,
  scopesAllow,
  scopesWithin,
  DANGEROUS_SCOPES,
} from '../../../services/core/auth/scopes.ts';
import {
  hasPermission,
  permissionMask,
  PERMISSION_FLAGS,
  BUILT_IN_ROLES,
  DEFAULT_PERMISSIONS,
} from '../../../services/core/roles/permissions.ts';
import { seal, unseal } from '../../../services/core/oauth/seal.ts';
import { isValidRedirectUri, validateApp, AppValidationError } from '../../../services/core/oauth/apps.ts';
import { railsBoolean, fieldList } from '../../../services/api/accounts/params.ts';
import { parseAcct } from '../../../services/core/accounts/queries.ts';
import type { Core } from '../../../services/core/context.ts';

describe('scopes', () => {
  it('parses space- and plus-separated scopes with `read` as the default', () => {
    expect(parseScopes('read write')).toEqual(['read', 'write']);
    expect(parseScopes('read+write+read')).toEqual(['read', 'write']);
    expect(parseScopes('')).toEqual(['read']);
    expect(parseScopes(undefined)).toEqual(['read']);
  });

  it('parents cover granular scopes; follow covers the follow-related ones', () => {
    expect(scopesAllow(['read'], ['read:bookmarks'])).toBe(true);
    expect(scopesAllow(['write:statuses'], ['write', 'write:accounts'])).toBe(false);
    expect(scopesAllow(['follow'], ['write:follows'])).toBe(true);
    expect(scopesAllow(['follow'], ['read:statuses'])).toBe(false);
    expect(scopesAllow(['admin:read'], ['admin:read:accounts'])).toBe(true);
    expect(expandScopes(['read']).has('read:accounts')).toBe(true);
    expect(scopesWithin(['read:accounts', 'write'], ['read', 'write'])).toBe(true);
    expect(scopesWithin(['admin:write'], ['read', 'write'])).toBe(false);
  });

  it('answers the same for a granted list seen before, by identity or by text', () => {
    const shared = Object.freeze(['read', 'follow']);
    for (let i = 0; i < 2; i++) {
      expect(scopesAllow(shared, ['write:follows'])).toBe(true);
      expect(scopesAllow(shared, ['write:statuses'])).toBe(false);
      expect(scopesAllow(['read', 'follow'], ['write:statuses'])).toBe(false);
      expect(scopesAllow(['read', 'follow', 'write'], ['write:statuses'])).toBe(true);
      expect(scopesAllow(['follow', 'read'], ['read:lists'])).toBe(true);
    }
  });

  it('marks admin scopes as dangerous', () => {
    expect(DANGEROUS_SCOPES.has('admin:write:accounts')).toBe(true);
    expect(DANGEROUS_SCOPES.has('write')).toBe(false);
  });
});

describe('role permissions', () => {
  it('checks bits, and administrator grants everything', () => {
    expect(hasPermission(PERMISSION_FLAGS.manage_users, 'manage_users')).toBe(true);
    expect(hasPermission(PERMISSION_FLAGS.manage_users, 'manage_reports')).toBe(false);
    expect(hasPermission(PERMISSION_FLAGS.administrator, 'delete_user_data')).toBe(true);
    expect(hasPermission(DEFAULT_PERMISSIONS, 'invite_users')).toBe(true);
    expect(permissionMask(['manage_users', 'manage_taxonomies'])).toBe(0x400 | 0x100);
    expect(() => permissionMask(['fly'])).toThrow(/unknown permission/);
  });

  it('seeds Owner, Admin and Moderator like Mastodon', () => {
    const byName = Object.fromEntries(BUILT_IN_ROLES.map((r) => [r.name, r]));
    expect(hasPermission(byName.Owner.permissions, 'manage_roles')).toBe(true);
    expect(hasPermission(byName.Admin.permissions, 'manage_settings')).toBe(true);
    expect(hasPermission(byName.Admin.permissions, 'administrator')).toBe(false);
    expect(hasPermission(byName.Moderator.permissions, 'manage_reports')).toBe(true);
    expect(hasPermission(byName.Moderator.permissions, 'manage_settings')).toBe(false);
  });
});

describe('token sealing', () => {
  const key = 'k'.repeat(64);
  it('round-trips and refuses other keys or tampering', () => {
    const sealed = seal(key, 'secret-token');
    expect(sealed).not.toContain('secret-token');
    expect(unseal(key, sealed)).toBe('secret-token');
    expect(unseal('x'.repeat(64), sealed)).toBeNull();
    expect(unseal(key, `${sealed.slice(0, -2)}AA`)).toBeNull();
    expect(unseal(key, 'garbage')).toBeNull();
  });
});

describe('app validation', () => {
  it('accepts absolute URIs (custom schemes too) and oob; refuses fragments and script schemes', () => {
    for (const ok of ['https://a.example/cb', 'http://localhost:3000/cb', 'myapp://oauth', 'urn:ietf:wg:oauth:2.0:oob'])
      expect(isValidRedirectUri(ok)).toBe(true);
    for (const bad of ['/relative', 'not a uri', 'https://a.example/#frag', 'javascript:alert(1)', 'data:text/html,x'])
      expect(isValidRedirectUri(bad)).toBe(false);
  });

  it('names the problem', () => {
    const base = { name: 'x', redirectUris: ['https://a.example/cb'], scopes: ['read'], website: null };
    expect(() => validateApp(base)).not.toThrow();
    expect(() => validateApp({ ...base, name: ' ' })).toThrow(AppValidationError);
    expect(() => validateApp({ ...base, name: 'n'.repeat(61) })).toThrow(/too long/);
    expect(() => validateApp({ ...base, scopes: ['read', 'sudo'] })).toThrow(/valid set of scopes/);
    expect(() => validateApp({ ...base, website: 'ftp://x' })).toThrow(/Website/);
  });
});

describe('request parameters', () => {
  it('casts booleans like Rails', () => {
    for (const t of [true, 'true', '1', 't', 'on', 'yes', 1]) expect(railsBoolean(t)).toBe(true);
    for (const f of [false, 'false', '0', 'f', 'off', 'no', 'FALSE', 0]) expect(railsBoolean(f)).toBe(false);
    for (const n of [undefined, null, '']) expect(railsBoolean(n)).toBeUndefined();
  });

  it('reads fields_attributes as an array or an index-keyed hash, in index order', () => {
    expect(fieldList([{ name: 'a', value: '1' }])).toEqual([{ name: 'a', value: '1' }]);
    expect(fieldList({ '1': { name: 'b', value: '2' }, '0': { name: 'a' } })).toEqual([
      { name: 'a', value: '' },
      { name: 'b', value: '2' },
    ]);
    expect(fieldList('nope')).toEqual([]);
  });

  it('parses acct handles, treating our own domain as local', () => {
    const core = { config: { localDomain: 'social.example', webDomain: 'www.social.example' } } as unknown as Core;
    expect(parseAcct(core, '@alice')).toEqual({ username: 'alice', domain: null });
    expect(parseAcct(core, 'alice@Social.Example')).toEqual({ username: 'alice', domain: null });
    expect(parseAcct(core, 'bob@other.example')).toEqual({ username: 'bob', domain: 'other.example' });
    expect(parseAcct(core, 'a@b@c')).toBeNull();
  });
});
