// Which profile field values are checked for rel="me" (Mastodon's Account::Field#verifiable?) and
// which links of a page count as rel="me"; the link of a remote field's HTML.
import {
  keepVerifications,
  relMeLinks,
  remoteFieldUrl,
  verifiableUrl,
} from '../../../services/core/accounts/linkVerification.ts';

describe('verifiableUrl', () => {
  it.each([
    ['https://example.com', 'https://example.com/'],
    ['https://example.com/', 'https://example.com/'],
    ['https://blog.example.com/about/me', 'https://blog.example.com/about/me'],
    ['https://example.com:8443/me', 'https://example.com:8443/me'],
    ['https://example.com/me?tab=1', 'https://example.com/me?tab=1'],
  ])('checks %s', (value, url) => {
    expect(verifiableUrl(value, false)).toBe(url);
  });

  it.each([
    ['plain text', 'my homepage'],
    ['http without FEDERATION_ALLOW_HTTP', 'http://example.com/'],
    ['another scheme', 'ftp://example.com/'],
    ['a user and password', 'https://user:secret@example.com/'],
    ['an upper case host', 'https://Example.com/'],
    ['an IDN host', 'https://bücher.example/'],
    ['dot segments', 'https://example.com/a/../b'],
    ['text around the link', 'see https://example.com/'],
  ])('does not check %s', (_what, value) => {
    expect(verifiableUrl(value, false)).toBeNull();
  });

  it('accepts http only where plain http is allowed', () => {
    expect(verifiableUrl('http://127.0.0.1:8080/me', true)).toBe('http://127.0.0.1:8080/me');
  });
});

describe('relMeLinks', () => {
  it('finds <a> and <link> whose rel has the token "me", in document order', () => {
    const html = `<html><head><link rel="me" href="https://social.example/@a">
      <link rel="stylesheet" href="/s.css"></head><body>
      <a href="https://x.example/@b" rel="nofollow  ME noopener">b</a>
      <a href="https://y.example/@c" rel="meh">not me</a>
      <a rel="me">no href</a><span rel="me" href="https://z.example/">not a link</span></body></html>`;
    expect(relMeLinks(html)).toEqual(['https://social.example/@a', 'https://x.example/@b']);
  });

  it('finds nothing in a page without rel="me"', () => {
    expect(relMeLinks('<p><a href="https://social.example/@a">me</a></p>')).toEqual([]);
  });
});

describe('remoteFieldUrl (Mastodon extract_url_from_html)', () => {
  it('takes a lone link whose text is its URL, invisible spans included', () => {
    const html =
      '<a href="https://sol.example/" rel="me nofollow noopener" target="_blank"><span class="invisible">https://</span><span class="">sol.example/</span><span class="invisible"></span></a>';
    expect(remoteFieldUrl(html)).toBe('https://sol.example/');
  });

  it.each([
    ['plain text', 'my homepage'],
    ['text around the link', 'see <a href="https://sol.example/">https://sol.example/</a>'],
    ['a link whose text differs', '<a href="https://evil.example/">https://sol.example/</a>'],
    [
      'two links',
      '<a href="https://a.example/">https://a.example/</a><a href="https://b.example/">https://b.example/</a>',
    ],
    ['a link in a paragraph', '<p><a href="https://sol.example/">https://sol.example/</a></p>'],
    ['a link without href', '<a>https://sol.example/</a>'],
  ])('takes nothing from %s', (_what, html) => {
    expect(remoteFieldUrl(html)).toBeNull();
  });
});

describe('keepVerifications', () => {
  it('keeps the verification of a value that stayed, drops the others', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const before = [
      { name: 'Home', value: 'a', verifiedAt: at },
      { name: 'Blog', value: 'b', verifiedAt: at },
    ];
    expect(
      keepVerifications(before, [
        { name: 'Site', value: 'a', verifiedAt: null },
        { name: 'Blog', value: 'c', verifiedAt: null },
      ]),
    ).toEqual([
      { name: 'Site', value: 'a', verifiedAt: at },
      { name: 'Blog', value: 'c', verifiedAt: null },
    ]);
  });
});
