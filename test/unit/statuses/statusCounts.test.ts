// The counter changes new statuses make (services/core/statuses/statusCounts.ts), shared by posting
// and the ingress: one statuses_count change per author marked by its newest status, direct
// statuses not counted, replies counted on public and unlisted threads only.
import { authorStatusCountChanges, countedParentOf, tally } from '../../../services/core/statuses/statusCounts.ts';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

test('one change per author: the number of its statuses, its latest time, marked by its newest status', () => {
  const changes = authorStatusCountChanges([
    { _id: 11n, accountId: 1n, createdAt: at(5), visibility: 'public' },
    { _id: 13n, accountId: 1n, createdAt: at(3), visibility: 'unlisted' },
    { _id: 12n, accountId: 2n, createdAt: at(1), visibility: 'private' },
    { _id: 14n, accountId: 2n, createdAt: at(9), visibility: 'direct' },
    { _id: 15n, accountId: 3n, createdAt: at(2), visibility: 'direct' },
  ]);
  expect(changes).toEqual([
    { _id: 1n, inc: { statusesCount: 2 }, max: { lastStatusAt: at(5) }, mark: 's+13' },
    { _id: 2n, inc: { statusesCount: 1 }, max: { lastStatusAt: at(1) }, mark: 's+12' },
  ]);
});

test('a reply counts on its parent only when public or unlisted', () => {
  expect(countedParentOf({ inReplyToId: 7n, visibility: 'public' })).toBe(7n);
  expect(countedParentOf({ inReplyToId: 7n, visibility: 'unlisted' })).toBe(7n);
  expect(countedParentOf({ inReplyToId: 7n, visibility: 'private' })).toBeNull();
  expect(countedParentOf({ inReplyToId: 7n, visibility: 'direct' })).toBeNull();
  expect(countedParentOf({ inReplyToId: null, visibility: 'public' })).toBeNull();
});

test('tally counts each id', () => {
  expect([...tally([3n, 1n, 3n, 3n])]).toEqual([
    [3n, 3],
    [1n, 1],
  ]);
  expect(tally([]).size).toBe(0);
});
