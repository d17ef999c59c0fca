import { parseCidr, parseIp, formatCidr } from '../../../services/core/moderation/ipBlocks.ts';
import { canonicalEmail } from '../../../services/core/moderation/emailBlocks.ts';

describe('IP ranges', () => {
  it.each([
    ['192.0.2.77/24', '192.0.2.0/24'],
    ['192.0.2.77', '192.0.2.77/32'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:db8::1/32', '2001:db8::/32'],
    ['2001:DB8:0:0:1::1', '2001:db8::1:0:0:1/128'],
    ['::ffff:198.51.100.4/32', '198.51.100.4/32'],
    ['::1', '::1/128'],
  ])('%s → %s', (input, expected) => {
    const range = parseCidr(input);
    expect(range).not.toBeNull();
    expect(formatCidr(range!)).toBe(expected);
  });

  it.each(['', 'abc', '300.1.1.1', '1.2.3.4/33', '1.2.3.4/x', '2001:db8::/129', '1.2.3.4/24/1', '1:2:3:4:5:6:7:8:9'])(
    'rejects %j',
    (input) => {
      expect(parseCidr(input)).toBeNull();
    },
  );

  it('treats IPv4-mapped IPv6 addresses as IPv4', () => {
    expect(parseIp('::ffff:10.0.0.1')).toEqual(parseIp('10.0.0.1'));
  });
});

it('canonicalises e-mail addresses as Mastodon does', () => {
  expect(canonicalEmail('John.Doe+promo@Example.org')).toBe('johndoe@example.org');
  expect(canonicalEmail('j.o.h.n.doe@example.org')).toBe('johndoe@example.org');
});
