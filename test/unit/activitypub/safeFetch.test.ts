import { loadConfig } from '../../../services/core/config.ts';
import {
  checkRemoteUrl,
  FetchError,
  isAllowedAddress,
  isSpecialAddress,
  resolveAllowedAddress,
} from '../../../services/core/activitypub/safeFetch.ts';

const strict = loadConfig({ NODE_ENV: 'test', LOCAL_DOMAIN: 'our.example' });
const permissive = loadConfig({
  NODE_ENV: 'test',
  LOCAL_DOMAIN: 'our.example',
  ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32,::1/128,10.1.0.0/16',
  FEDERATION_ALLOW_HTTP: 'true',
});

describe('SSRF protection', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '2001:db8::1',
    '64:ff9b::7f00:1',
  ])('refuses %s', (ip) => {
    expect(isSpecialAddress(ip)).toBe(true);
    expect(isAllowedAddress(strict, ip)).toBe(false);
  });

  it.each(['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows public %s', (ip) => {
    expect(isAllowedAddress(strict, ip)).toBe(true);
  });

  it('allows private addresses listed in ALLOWED_PRIVATE_ADDRESSES, and only those', () => {
    expect(isAllowedAddress(permissive, '127.0.0.1')).toBe(true);
    expect(isAllowedAddress(permissive, '::1')).toBe(true);
    expect(isAllowedAddress(permissive, '10.1.200.3')).toBe(true);
    expect(isAllowedAddress(permissive, '10.2.0.1')).toBe(false);
    expect(isAllowedAddress(permissive, '127.0.0.2')).toBe(false);
    expect(isAllowedAddress(permissive, '169.254.169.254')).toBe(false);
  });

  it('normalises decimal, octal and hex IPv4 forms before the check', async () => {
    for (const raw of [
      'https://2130706433/x',
      'https://0177.0.0.1/x',
      'https://0x7f.0.0.1/x',
      'https://0x7f000001/x',
      'https://127.1/x',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://169.254.169.254/latest/meta-data',
    ]) {
      const url = checkRemoteUrl(strict, raw);
      await expect(resolveAllowedAddress(strict, url)).rejects.toMatchObject({ reason: 'private-address' });
    }
  });

  it('refuses DNS names that resolve to private addresses', async () => {
    await expect(resolveAllowedAddress(strict, new URL('https://localhost/'))).rejects.toBeInstanceOf(FetchError);
    await expect(resolveAllowedAddress(permissive, new URL('http://localhost:3000/'))).resolves.toMatchObject({
      address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/),
    });
  });

  it('refuses plain http unless FEDERATION_ALLOW_HTTP, other schemes always, and credentials', () => {
    expect(() => checkRemoteUrl(strict, 'http://remote.example/')).toThrow(FetchError);
    expect(checkRemoteUrl(permissive, 'http://remote.example/').protocol).toBe('http:');
    expect(() => checkRemoteUrl(permissive, 'file:///etc/passwd')).toThrow(FetchError);
    expect(() => checkRemoteUrl(permissive, 'gopher://remote.example/')).toThrow(FetchError);
    expect(() => checkRemoteUrl(strict, 'https://user:pw@remote.example/')).toThrow(FetchError);
    expect(() => checkRemoteUrl(strict, 'https://abc.onion/')).toThrow(FetchError);
    expect(() => checkRemoteUrl(strict, 'not a url')).toThrow(FetchError);
  });

  it('rejects invalid ALLOWED_PRIVATE_ADDRESSES entries at start-up', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', ALLOWED_PRIVATE_ADDRESSES: 'localhost' })).toThrow(
      /ALLOWED_PRIVATE_ADDRESSES/,
    );
    expect(() => loadConfig({ NODE_ENV: 'test', ALLOWED_PRIVATE_ADDRESSES: '10.0.0.0/33' })).toThrow(
      /ALLOWED_PRIVATE_ADDRESSES/,
    );
  });
});
