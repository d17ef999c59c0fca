// countedCopy (services/core/db/countOnce.ts): a counted document's new copy is made from a cached
// one only when the copy is shown to be from before the count.
import { countedCopy, type CountChange } from '../../../services/core/db/countOnce.ts';

const change: CountChange = {
  _id: 1n,
  inc: { statusesCount: 2 },
  max: { lastStatusAt: new Date('2026-11-30T10:00:00Z') },
  mark: 's+9',
};

test('a copy from before the count gets the increments and the raised fields', () => {
  const copy = { _id: 1n, statusesCount: 5, lastStatusAt: new Date('2026-11-30T09:00:00Z'), displayName: 'A' };
  expect(countedCopy(change, copy)).toEqual({
    _id: 1n,
    statusesCount: 7,
    lastStatusAt: new Date('2026-11-30T10:00:00Z'),
    displayName: 'A',
  });
  expect(countedCopy(change, { _id: 1n, statusesCount: 0, lastStatusAt: null })).toMatchObject({ statusesCount: 2 });
});

test('a copy that may already hold the count, or a change that cannot tell, gives nothing', () => {
  // Read after the write (the field at the value), or after a newer one (above it).
  expect(countedCopy(change, { _id: 1n, statusesCount: 7, lastStatusAt: new Date('2026-11-30T10:00:00Z') })).toBeNull();
  expect(countedCopy(change, { _id: 1n, statusesCount: 8, lastStatusAt: new Date('2026-11-30T11:00:00Z') })).toBeNull();
  // Without a raised field no copy shows its age.
  expect(countedCopy({ _id: 1n, inc: { statusesCount: -1 }, mark: 's-9' }, { _id: 1n, statusesCount: 7 })).toBeNull();
});
