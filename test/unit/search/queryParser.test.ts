// The status search query language (core/search/queryParser.ts) and the indexed terms.
import { parseStatusQuery } from '../../../services/core/search/queryParser.ts';
import { words } from '../../../services/core/search/tokenize.ts';

test('words are folded (case, width, accents) and stop words dropped', () => {
  expect(words('The Café, ＡＢＣ and naïve #Tag @bob!')).toEqual(['cafe', 'abc', 'naive', 'tag', 'bob']);
});

test('operators, exclusions and phrases', () => {
  const q = parseStatusQuery(
    'apple "pie crust" -pear from:@Bob has:media is:reply language:DE before:2026-01-10 after:2026-01-01 in:library',
  );
  expect(q.terms).toEqual(['apple', 'pie', 'crust', 'has:media', 'is:reply', 'lang:de']);
  expect(q.excluded).toEqual(['pear']);
  expect(q.phrases).toEqual(['pie crust']);
  expect(q.from).toEqual(['bob']);
  expect(q.before).toBe(Date.UTC(2026, 0, 10));
  expect(q.after).toBe(Date.UTC(2026, 0, 2));
  expect(q.libraryOnly).toBe(true);
});

test('during: and unknown prefixes; bad dates are ignored', () => {
  const q = parseStatusQuery('during:2026-02-03 foo:bar before:yesterday has:unicorn');
  expect(q.after).toBe(Date.UTC(2026, 1, 3));
  expect(q.before).toBe(Date.UTC(2026, 1, 4));
  expect(q.terms).toEqual(['foo', 'bar']);
});
