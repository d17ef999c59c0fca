// Text processing: entity extraction, Mastodon-style HTML and character counting.
import { extractEntities, normalizeTagName } from '../../../services/core/text/extract.ts';
import { formatStatusHtml, linkHtml } from '../../../services/core/text/formatStatus.ts';
import { countStatusCharacters, graphemeLength } from '../../../services/core/text/countCharacters.ts';

const opts = {
  baseUrl: 'https://host',
  resolveMention: (username: string, domain: string | null) =>
    username === 'bob' && domain === null ? { url: 'https://host/@bob', display: 'bob' } : null,
};

describe('formatStatusHtml', () => {
  it('renders the reference example exactly', () => {
    expect(formatStatusHtml('Hi @bob see https://example.com/a/very/long/path/that/goes/on #Tag', opts)).toBe(
      '<p>Hi <span class="h-card" translate="no"><a href="https://host/@bob" class="u-url mention">@<span>bob</span></a></span> see ' +
        '<a href="https://example.com/a/very/long/path/that/goes/on" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="ellipsis">example.com/a/very/long/path/t</span><span class="invisible">hat/goes/on</span></a> ' +
        '<a href="https://host/tags/Tag" class="mention hashtag" rel="tag">#<span>Tag</span></a></p>',
    );
  });

  it('escapes markup and builds paragraphs and line breaks', () => {
    expect(formatStatusHtml('<script>alert(1)</script> & "q"\nline two\n\npara two', opts)).toBe(
      '<p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; "q"<br />line two</p><p>para two</p>',
    );
    expect(formatStatusHtml('   ', opts)).toBe('');
  });

  it('leaves unknown mentions as text and ignores non-http links', () => {
    expect(formatStatusHtml('hey @nobody@remote.example and javascript:alert(1)', opts)).toBe(
      '<p>hey @nobody@remote.example and javascript:alert(1)</p>',
    );
  });

  it('shortens short links without an ellipsis', () => {
    expect(linkHtml('http://www.a.io/x')).toContain(
      '<span class="invisible">http://www.</span><span class="">a.io/x</span><span class="invisible"></span>',
    );
  });
});

describe('extractEntities', () => {
  it('finds mentions, tags and URLs, but nothing inside URLs or e-mail addresses', () => {
    const kinds = extractEntities('@a @b@x.org mail@host.org #tag https://e.com/#notatag/@nouser #1 x#y').map((e) =>
      e.kind === 'url'
        ? e.url
        : e.kind === 'mention'
          ? `@${e.username}${e.domain ? `@${e.domain}` : ''}`
          : `#${e.name}`,
    );
    expect(kinds).toEqual(['@a', '@b@x.org', '#tag', 'https://e.com/#notatag/@nouser']);
  });

  it('gives the same text the same frozen entities, which a caller cannot change', () => {
    const first = extractEntities('hi @a #t');
    expect(extractEntities('hi @a #t')).toBe(first);
    expect(Object.isFrozen(first) && first.every((e) => Object.isFrozen(e))).toBe(true);
  });

  it('normalises tag names', () => {
    expect(normalizeTagName('CafÉ')).toBe('cafe');
    expect(normalizeTagName('ＴＡＧ')).toBe('tag');
  });
});

describe('countStatusCharacters', () => {
  it('counts a URL as 23 characters and a remote mention by its local part', () => {
    expect(countStatusCharacters(`https://example.com/${'x'.repeat(100)}`)).toBe(23);
    expect(countStatusCharacters('@someone@a-very-long-domain.example')).toBe('@someone'.length);
  });

  it('counts grapheme clusters and the content warning', () => {
    expect(countStatusCharacters('👩‍👩‍👧‍👦🇫🇷', 'cw')).toBe(4);
  });

  it('counts plain ASCII as the segmenter does: CR LF is one grapheme', () => {
    const segments = (t: string) => [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(t)].length;
    for (const t of ['plain text', 'a\r\nb\r\n\r\nc', 'a\rb\nc\td', '', '\r\n', 'caf\u00e9 \u0301x'])
      expect(graphemeLength(t)).toBe(segments(t));
  });
});
