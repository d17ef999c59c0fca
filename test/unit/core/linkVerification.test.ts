// Which profile field values are checked for rel="me" (Mastodon's Account::Field#verifiable?) and
// which links of a page count as rel="me".
import { relMeLinks, verifiableUrl } from '../../../services/core/accounts/linkVerification.ts';

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
