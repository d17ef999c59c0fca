// Two scheduler processes (`services/main.ts pipeline scheduler`, real child processes) against one
// database and Kafka: every due scheduled status is published exactly once (one status, one
// StatusCreated on Kafka), an expired poll is closed once, and both processes stop cleanly.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { polls } from '../../../services/core/model/polls.ts';
import { scheduledStatuses, type ScheduledStatusDoc } from '../../../services/core/model/scheduledStatuses.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { createScheduledStatus } from '../../../services/core/scheduledStatuses/scheduledStatuses.ts';
import { eventCodec } from '../../../schemas/codec.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { readTopic } from '../../support/kafka.ts';
import { killChild, serverEnv, startMain, started, type MainRun } from '../../support/processes.ts';

const COUNT = 12;

describe('scheduler pipeline with two processes', () => {
  const config = testConfig();
  let core: Core;
  const children: MainRun[] = [];

  beforeAll(async () => {
    ({ core } = await createTestCore(config));
  });

  afterAll(async () => {
    await Promise.all(children.map(killChild));
    if (core) await closeTestCore(core);
  });

  it('publishes each due status exactly once and closes an expired poll once', async () => {
    const alice = await createTestUser(core);
    // Each process serves its ops endpoints (health, metrics) on a port of its own (port 0).
    for (let i = 0; i < 2; i++)
      children.push(startMain(['pipeline', 'scheduler'], serverEnv(config, { LOG_LEVEL: 'info' })));
    const ports = await Promise.all(children.map(started));
    expect(new Set(ports.map((p) => p.port)).size).toBe(2);

    // Scheduled for later, then all made due at once while both processes are running.
    const later = new Date(Date.now() + 3600_000);
    const scheduled: ScheduledStatusDoc[] = [];
    for (let i = 0; i < COUNT; i++) {
      scheduled.push(
        await createScheduledStatus(
          core,
          alice.account,
          {
            text: `Scheduled post number ${i}`,
            spoilerText: '',
            sensitive: false,
            visibility: 'public',
            language: null,
            inReplyToId: null,
            mediaIds: [],
            poll: null,
          },
          later,
        ),
      );
    }
    const withPoll = await postStatus(core, alice.account, {
      text: 'Poll ending soon',
      poll: { options: ['a', 'b'], expiresIn: 300, multiple: false, hideTotals: false },
    });
    const dueAt = new Date();
    await collection(core.db, scheduledStatuses).updateMany(
      { _id: { $in: scheduled.map((s) => s._id) } },
      { $set: { scheduledAt: dueAt } },
    );
    await collection(core.db, polls).updateOne({ _id: withPoll.pollId! }, { $set: { expiresAt: dueAt } });

    await eventually(
      async () =>
        (await collection(core.db, scheduledStatuses).countDocuments({ _id: { $in: scheduled.map((s) => s._id) } })) ===
        0,
      30_000,
      'the scheduled statuses to be published',
    );
    const posted = await collection(core.db, statuses)
      .find({ accountId: alice.account._id, text: /^Scheduled post number/ })
      .toArray();
    if (posted.length !== COUNT)
      throw new Error(`posted ${posted.length}: ${children.map((c) => c.output().slice(-3000)).join('\n---\n')}`);
    expect(new Set(posted.map((s) => s.text)).size).toBe(COUNT);

    // Kafka saw one StatusCreated per published status, no more.
    const ids = new Set(posted.map((s) => String(s._id)));
    const codec = eventCodec();
    const created = (msgs: Awaited<ReturnType<typeof readTopic>>) =>
      msgs
        .filter((m) => m.headers['event-type'] === 'StatusCreated')
        .map((m) => String((codec.decode(m.value!).record as { statusId: string }).statusId))
        .filter((id) => ids.has(id));
    const messages = await readTopic(config, 'statuses', (msgs) => created(msgs).length >= COUNT);
    expect(created(messages).sort()).toEqual([...ids].sort());

    const closed = await eventually(
      async () =>
        (await collection(core.db, polls).findOne({ _id: withPoll.pollId!, closedAt: { $ne: null } })) ?? undefined,
      30_000,
      'the poll to close',
    );
    expect(closed.closingAttempts).toBe(1);
    const pollMessages = await readTopic(config, 'polls', (msgs) =>
      msgs.some((m) => m.headers['event-type'] === 'PollExpired'),
    );
    expect(pollMessages.filter((m) => m.headers['event-type'] === 'PollExpired')).toHaveLength(1);

    if (process.env.DEBUG_SCHEDULER)
      console.log(
        children
          .map((c) =>
            c
              .output()
              .split('\n')
              .filter((l) => l.includes('handled'))
              .join('\n'),
          )
          .join('\n---\n'),
      );
    for (const c of children) c.child.kill('SIGTERM');
    expect(await Promise.all(children.map((c) => c.exit))).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });
});
