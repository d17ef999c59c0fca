import {
  normalizeDomain,
  domainVariants,
  isStricterThan,
  obfuscateDomain,
} from '../../../services/core/moderation/domainBlocks.ts';

describe('domain normalisation', () => {
  it.each([
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['  example.com  ', 'example.com'],
    ['https://Sub.Example.com/path', 'sub.example.com'],
    ['alice@example.com', 'example.com'],
    ['*.example.com', 'example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['XN--BCHER-KVA.example', 'xn--bcher-kva.example'],
    ['localhost:3000', 'localhost:3000'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeDomain(input)).toBe(expected);
  });

  it.each(['', ' ', 'exa mple.com', 'a..b', '.example.com', 'exam<ple>.com', 'a'.repeat(64) + '.com', 'x'.repeat(400)])(
    'rejects %j',
    (input) => {
      expect(normalizeDomain(input)).toBeNull();
    },
  );

  it('lists the domain and every parent, most specific first', () => {
    expect(domainVariants('a.b.example.com')).toEqual(['a.b.example.com', 'b.example.com', 'example.com', 'com']);
    expect(domainVariants('b.example.com:8443')).toEqual(['b.example.com:8443', 'b.example.com', 'example.com', 'com']);
  });
});

describe('block strictness (Mastodon stricter_than?)', () => {
  const b = (severity: 'silence' | 'suspend' | 'noop', rejectMedia = false, rejectReports = false) => ({
    severity,
    rejectMedia,
    rejectReports,
  });
  it('orders suspend > silence > noop and media/report rejection', () => {
    expect(isStricterThan(b('suspend'), b('suspend'))).toBe(true);
    expect(isStricterThan(b('silence'), b('suspend'))).toBe(false);
    expect(isStricterThan(b('noop'), b('silence'))).toBe(false);
    expect(isStricterThan(b('silence'), b('noop'))).toBe(true);
    expect(isStricterThan(b('silence'), b('silence', true))).toBe(false);
    expect(isStricterThan(b('silence', true), b('silence', true))).toBe(true);
    expect(isStricterThan(b('noop', true, true), b('noop', false, true))).toBe(true);
  });
});

it('obfuscates the middle of a domain as Mastodon does', () => {
  expect(obfuscateDomain('example.com')).toBe('exa****.*om');
  expect(obfuscateDomain('a.b')).toBe('a.*');
});
