// The verification each status event carries lets the outbox relay decide, after a crash between
// recording an event and publishing it, whether the write happened: publish if it did, drop if not.
import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { statusDeletedEvent, statusUpdatedEvent } from '../../../services/core/statuses/events.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

let core: Core;
let published: OutboxEvent[];

beforeAll(async () => {
  ({ core, published } = await createTestCore());
});

afterAll(async () => {
  if (core) await closeTestCore(core);
});

class Crash extends Error {}

/** Runs the relay until every pending record has been handled (published or dropped). */
async function relayAll(): Promise<number> {
  let relayed = 0;
  await eventually(
    async () => {
      relayed += await core.outbox.relayPending();
      return (await core.db.collection('outbox').countDocuments()) === 0;
    },
    10_000,
    'the outbox to be relayed',
  );
  return relayed;
}

it('publishes an edit and a delete whose write landed, and drops those whose write did not', async () => {
  const { account } = await createTestUser(core);
  const status = await postStatus(core, account, { text: 'crash test' });
  const coll = collection(core.db, statuses);
  // The post's own record is removed after publishing, batched with others' (a short linger): gone
  // before the crashes below, so the relay counts only theirs.
  await eventually(
    async () => (await core.db.collection('outbox').countDocuments()) === 0,
    10_000,
    'the post’s own outbox record to be removed',
  );

  const landedAt = new Date();
  await expect(
    core.outbox.write([statusUpdatedEvent(status, landedAt, false)], async () => {
      await coll.updateOne({ _id: status._id }, { $set: { editedAt: landedAt } });
      throw new Crash();
    }),
  ).rejects.toThrow(Crash);
  const lostAt = new Date(landedAt.getTime() + 1);
  await expect(
    core.outbox.write([statusUpdatedEvent(status, lostAt, false)], async () => {
      throw new Crash();
    }),
  ).rejects.toThrow(Crash);
  await expect(
    core.outbox.write([statusDeletedEvent(status, lostAt)], async () => {
      throw new Crash();
    }),
  ).rejects.toThrow(Crash);

  expect(await relayAll()).toBe(1);
  const relayed = published.filter((e) => e.payload.statusId === String(status._id) && e.type !== 'StatusCreated');
  expect(relayed.map((e) => e.type)).toEqual(['StatusUpdated']);
  expect(new Date(relayed[0].payload.editedAt as string).getTime()).toBe(landedAt.getTime());

  await expect(
    core.outbox.write([statusDeletedEvent(status, lostAt)], async () => {
      await coll.updateOne({ _id: status._id }, { $set: { deletedAt: lostAt } });
      throw new Crash();
    }),
  ).rejects.toThrow(Crash);
  expect(await relayAll()).toBe(1);
  expect(published.some((e) => e.type === 'StatusDeleted' && e.payload.statusId === String(status._id))).toBe(true);
});
