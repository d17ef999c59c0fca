import { prefixRange } from '../../../services/core/discovery/accountSearch.ts';

// MongoDB's default (binary) string order: UTF-8 bytes.
const inRange = (s: string, r: { $gte: string; $lt?: string }): boolean =>
  Buffer.compare(Buffer.from(s), Buffer.from(r.$gte)) >= 0 &&
  (r.$lt === undefined || Buffer.compare(Buffer.from(s), Buffer.from(r.$lt)) < 0);

describe('prefixRange', () => {
  it('holds exactly the strings that start with the prefix, whatever follows', () => {
    const r = prefixRange('ab');
    for (const s of ['ab', 'abc', 'ab\uffff', 'ab😀', 'ab\u{10ffff}x', 'abé']) expect(inRange(s, r)).toBe(true);
    for (const s of ['a', 'aa\u{10ffff}', 'ac', 'b', 'a😀', 'AB']) expect(inRange(s, r)).toBe(false);
  });

  it('handles non-ASCII and astral last characters', () => {
    expect(inRange('café au lait', prefixRange('café'))).toBe(true);
    expect(inRange('cafe', prefixRange('café'))).toBe(false);
    expect(inRange('😀😀', prefixRange('😀'))).toBe(true);
    expect(inRange('😁', prefixRange('😀'))).toBe(false);
    expect(prefixRange('a\ud7ff').$lt).toBe('a\ue000');
    expect(prefixRange('\u{10ffff}')).toEqual({ $gte: '\u{10ffff}' });
  });
});
