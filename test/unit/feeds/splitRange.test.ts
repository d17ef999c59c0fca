import { splitRange } from '../../../services/core/feeds/followerSlices.ts';

/** The ranges tile (after, upTo]: contiguous, highest first, none empty. */
function expectTiling(after: bigint, upTo: bigint, n: number): void {
  const parts = splitRange(after, upTo, n);
  expect(parts[0]!.upTo).toBe(upTo);
  expect(parts.at(-1)!.after).toBe(after);
  for (let i = 1; i < parts.length; i++) expect(parts[i]!.upTo).toBe(parts[i - 1]!.after);
  for (const p of parts) expect(p.upTo > p.after).toBe(true);
  expect(parts.length).toBeLessThanOrEqual(n);
}

describe('splitRange', () => {
  it('cuts a range into equal shares that cover it exactly once', () => {
    expect(splitRange(0n, 100n, 4)).toEqual([
      { upTo: 100n, after: 75n },
      { upTo: 75n, after: 50n },
      { upTo: 50n, after: 25n },
      { upTo: 25n, after: 0n },
    ]);
    expectTiling(7n, 1_000_003n, 4);
    // Snowflake-sized ids: no precision is lost.
    expectTiling(113_715_049_834_496_000n, 113_715_049_834_496_000n + 987_654_321n, 4);
  });

  it('keeps a range narrower than the shares whole', () => {
    expect(splitRange(10n, 12n, 4)).toEqual([{ upTo: 12n, after: 10n }]);
    expectTiling(10n, 14n, 4);
  });
});
