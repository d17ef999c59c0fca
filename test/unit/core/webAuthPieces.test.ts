// Pure pieces of log-in: the OIDC_* settings as Mastodon reads them, the per-IP throttle's key
// (IPv6 by /64, as rack-attack), and the username an external identity gets.
import { ConfigError, loadConfig } from '../../../services/core/config.ts';
import { throttleableIp } from '../../../services/core/rateLimit.ts';
import { usernameFromUid } from '../../../services/core/users/externalLogin.ts';

const OIDC = {
  OIDC_ENABLED: 'true',
  OIDC_DISPLAY_NAME: 'Company SSO',
  OIDC_ISSUER: 'https://sso.example.com/realms/staff',
  OIDC_DISCOVERY: 'true',
  OIDC_SCOPE: 'openid,profile,email',
  OIDC_UID_FIELD: 'preferred_username',
  OIDC_CLIENT_ID: 'mastodon',
  OIDC_CLIENT_SECRET: 's3cret',
  OIDC_REDIRECT_URI: 'https://social.example/auth/auth/openid_connect/callback',
  OIDC_SECURITY_ASSUME_EMAIL_IS_VERIFIED: 'true',
};

describe('OIDC settings', () => {
  it('are off unless OIDC_ENABLED', () => {
    expect(loadConfig({}).oidc).toBeNull();
    expect(loadConfig({ OIDC_ISSUER: 'https://sso.example.com' }).oidc).toBeNull();
  });

  it('read Mastodon variable names (comma-separated scopes)', () => {
    expect(loadConfig(OIDC).oidc).toEqual({
      displayName: 'Company SSO',
      issuer: 'https://sso.example.com/realms/staff',
      discovery: true,
      endpoints: null,
      scope: ['openid', 'profile', 'email'],
      uidField: 'preferred_username',
      clientId: 'mastodon',
      clientSecret: 's3cret',
      redirectUri: 'https://social.example/auth/auth/openid_connect/callback',
      assumeEmailIsVerified: true,
    });
  });

  it('need the endpoints without discovery, and say which setting is wrong', () => {
    const manual = loadConfig({
      ...OIDC,
      OIDC_DISCOVERY: 'false',
      OIDC_AUTH_ENDPOINT: 'https://sso.example.com/auth',
      OIDC_TOKEN_ENDPOINT: 'https://sso.example.com/token',
      OIDC_JWKS_URI: 'https://sso.example.com/jwks',
    }).oidc;
    expect(manual?.endpoints).toEqual({
      authorization: 'https://sso.example.com/auth',
      token: 'https://sso.example.com/token',
      userinfo: null,
      jwks: 'https://sso.example.com/jwks',
    });
    const missing = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        return err instanceof ConfigError ? err.message : String(err);
      }
      return 'no error';
    };
    expect(missing({ ...OIDC, OIDC_DISCOVERY: 'false' })).toContain('OIDC_AUTH_ENDPOINT');
    expect(missing({ ...OIDC, OIDC_CLIENT_SECRET: '' })).toContain('OIDC_CLIENT_SECRET');
    expect(missing({ ...OIDC, OIDC_ISSUER: 'not a url' })).toContain('OIDC_ISSUER');
  });
});

describe('per-IP log-in throttle key', () => {
  it('keeps IPv4 addresses and groups IPv6 addresses by /64', () => {
    expect(throttleableIp('203.0.113.7')).toBe('203.0.113.7');
    expect(throttleableIp('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(throttleableIp('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(throttleableIp('2001:0db8:0001:0002:ffff:0:0:9')).toBe('2001:db8:1:2::/64');
    expect(throttleableIp('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(throttleableIp('::1')).toBe('0:0:0:0::/64');
  });
});

describe('username of an external identity (Mastodon ensure_valid_username)', () => {
  it('takes the part before "@", drops what a username cannot hold, 30 characters at most', () => {
    expect(usernameFromUid('dana')).toBe('dana');
    expect(usernameFromUid('dana@elsewhere.test')).toBe('dana');
    expect(usernameFromUid('vic.tor-99')).toBe('victor99');
    expect(usernameFromUid('Ünïcode_name')).toBe('ncode_name');
    expect(usernameFromUid('x'.repeat(40))).toHaveLength(30);
  });
});
