// The verification each status event carries lets the outbox relay decide, after a crash between
// recording an event and publishing it, whether the write happened: publish if it did, drop if not.
import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses, type StatusDoc } from '../../../services/core/model/statuses.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { statusCreatedEvent, statusDeletedEvent, statusUpdatedEvent } from '../../../services/core/statuses/events.ts';
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

it('carries a post’s events in its document: unset once published, relayed from there after a crash', async () => {
  const { account } = await createTestUser(core);
  const status = await postStatus(core, account, { text: 'carried' });
  expect(published.some((e) => e.type === 'StatusCreated' && e.payload.statusId === String(status._id))).toBe(true);
  await eventually(
    async () => !(await core.db.collection<StatusDoc>(statuses.name).findOne({ _id: status._id }))?.outbox,
    10_000,
    'the published events to be unset from the status',
  );

  // A crash after the insert, before the publish: the document holds the events; the relay
  // publishes them once their lease runs out, and unsets them.
  const crashed = { ...status, _id: await core.statusIds.next() };
  crashed.uniqueKey = `s:${crashed._id}`;
  crashed.uri = `${status.uri}-crashed`;
  await expect(
    core.outbox.writeCarried(
      [statusCreatedEvent(crashed, { hasPoll: false })],
      statuses,
      crashed._id,
      async (outbox) => {
        await core.db.collection<StatusDoc>(statuses.name).insertOne({ ...crashed, outbox });
        throw new Crash();
      },
    ),
  ).rejects.toThrow(Crash);
  // An insert that failed leaves nothing to relay.
  await expect(
    core.outbox.writeCarried(
      [statusCreatedEvent({ ...crashed, _id: crashed._id + 1n }, { hasPoll: false })],
      statuses,
      0n,
      async () => {
        throw new Crash();
      },
    ),
  ).rejects.toThrow(Crash);
  expect(published.some((e) => e.payload.statusId === String(crashed._id))).toBe(false);

  let relayed = 0;
  await eventually(
    async () => (relayed += await core.outbox.relayPending()) > 0,
    10_000,
    'the carried events to be relayed',
  );
  expect(relayed).toBe(1);
  expect(published.filter((e) => e.payload.statusId === String(crashed._id)).map((e) => e.type)).toEqual([
    'StatusCreated',
  ]);
  expect(published.some((e) => e.payload.statusId === String(crashed._id + 1n))).toBe(false);
  expect((await core.db.collection<StatusDoc>(statuses.name).findOne({ _id: crashed._id }))?.outbox).toBeUndefined();
  expect(await core.outbox.relayPending()).toBe(0);
});
