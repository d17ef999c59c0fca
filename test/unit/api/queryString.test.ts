// Query strings are parsed as Rack does (qs with Rails' bracket arrays); the plain ones most GET
// requests carry skip qs, and must come out exactly as qs would make them.
import qs from 'qs';
import { parseQueryString } from '../../../services/api/plugins/params.ts';

const QS = { arrayLimit: 1000, depth: 8, parameterLimit: 2000, allowDots: false } as const;

const cases = [
  'local=true',
  'limit=40&max_id=113456789012345678',
  'only_media=1&remote=false&limit=20',
  'a=&b=x',
  'with-dash=a.b~c_d',
  'a=1&a=2',
  'toString=1',
  '__proto__=x&y=1',
  'hasOwnProperty=1',
  'q=hello+world',
  'q=caf%C3%A9',
  'id[]=1&id[]=2',
  'a.b=1',
  'flag',
  'a=1&&b=2',
  'a==b',
  'types[]=mention&exclude_types%5B%5D=follow',
  `x=${'y'.repeat(600)}`,
];

describe('parseQueryString', () => {
  it.each(cases.map((s) => [s.length > 40 ? `${s.slice(0, 40)}…` : s, s]))(
    '%s comes out as qs makes it',
    (_name, s) => {
      expect(parseQueryString(s)).toStrictEqual(qs.parse(s, QS));
    },
  );

  it('keeps Rails arrays of hashes apart', () => {
    expect(parseQueryString('f[][name]=a&f[][value]=b&f[][name]=c')).toEqual({
      f: [{ name: 'a', value: 'b' }, { name: 'c' }],
    });
  });
});
