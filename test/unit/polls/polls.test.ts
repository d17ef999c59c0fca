import { castBoolean, parseChoices, validatePollInput, isExpired } from '../../../services/core/polls/polls.ts';
import type { PollDoc } from '../../../services/core/model/polls.ts';

describe('poll input', () => {
  it('casts Rails-style booleans', () => {
    for (const f of ['0', 'f', 'false', 'off', 'FALSE', false, 0]) expect(castBoolean(f)).toBe(false);
    for (const t of ['1', 't', 'true', 'on', true, 1]) expect(castBoolean(t)).toBe(true);
    expect(castBoolean('', true)).toBe(true);
    expect(castBoolean(undefined)).toBe(false);
  });

  it('accepts 2 to 4 options of at most 50 characters and 300 s to a month', () => {
    expect(validatePollInput({ options: ['a', 'b', 'c', 'd'], expiresIn: 2_629_746 })).toMatchObject({
      expiresIn: 2_629_746,
      multiple: false,
      hideTotals: false,
    });
    expect(validatePollInput({ options: [' a ', 'b'], expiresIn: 300, multiple: 'true' })).toMatchObject({
      options: ['a', 'b'],
      multiple: true,
    });
    expect(() => validatePollInput({ options: 'a,b', expiresIn: 300 })).toThrow(/more than one item/);
    expect(() => validatePollInput({ options: ['a', ''], expiresIn: 300 })).toThrow("Poll options can't be blank");
    expect(() => validatePollInput({ options: ['a', 'b'] })).toThrow('Poll expires at is invalid');
  });

  it('parses choices as distinct integer indexes', () => {
    expect(parseChoices(['0', '2', '2'])).toEqual([0, 2]);
    expect(parseChoices({ 0: '1' })).toEqual([1]);
    expect(parseChoices('3')).toEqual([3]);
    expect(parseChoices(undefined)).toEqual([]);
    expect(() => parseChoices(['-1'])).toThrow('The chosen vote option does not exist');
    expect(() => parseChoices(['a'])).toThrow('The chosen vote option does not exist');
  });

  it('knows when a poll has ended', () => {
    const poll = { closedAt: null, expiresAt: new Date(Date.now() + 1000) } as PollDoc;
    expect(isExpired(poll)).toBe(false);
    expect(isExpired(poll, new Date(Date.now() + 2000))).toBe(true);
    expect(isExpired({ ...poll, closedAt: new Date() })).toBe(true);
    expect(isExpired({ ...poll, expiresAt: null })).toBe(false);
  });
});
