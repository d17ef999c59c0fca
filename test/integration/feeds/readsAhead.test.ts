// The fan-out's reads ahead are shared by the partition batches it handles at the same time
// (ADR 0015): posts by many authors, spread over the partitions and fetched together, cost one
// read of who mutes their authors, not one per partition; and each post still reaches exactly the
// feeds its own author's side allows (a muted author's post stays out of the muter's home feed, an
// exclusive list's member's post goes to the list instead).
import type { CommandStartedEvent } from 'mongodb';
import type { Core } from '../../../services/core/context.ts';
import type { AccountDoc } from '../../../services/core/model/accounts.ts';
import { followAccount } from '../../../services/core/graph/follow.ts';
import { muteAccount } from '../../../services/core/graph/mute.ts';
import { addListMembers, createList } from '../../../services/core/lists/lists.ts';
import { markActive } from '../../../services/core/feeds/activity.ts';
import { feedIds, feedKey } from '../../../services/core/feeds/feeds.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { runFanOutPipeline } from '../../../pipelines/fanout/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { createCommandReportingCore, eventually } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { consumerTuning, readTopic } from '../../support/kafka.ts';
import { testConfig } from '../../support/config.ts';

const AUTHORS = 12;

let core: Core;
let close: () => Promise<void>;
let pipeline: Pipeline | undefined;

beforeAll(async () => {
  // As many partitions as the fan-out handles at once (the default; tests otherwise run with two).
  ({ core, close } = await createCommandReportingCore(testConfig({ KAFKA_PARTITIONS: '4' })));
});

afterAll(async () => {
  await pipeline?.stop();
  await close();
});

test('one read of the authors’ mutes for the batches of many partitions, each post where its author’s side allows', async () => {
  const reader = (await createTestUser(core)).account as AccountDoc;
  const authors = await Promise.all(
    Array.from({ length: AUTHORS }, async () => (await createTestUser(core)).account as AccountDoc),
  );
  for (const a of authors) await followAccount(core, reader, a);
  const [muted, listed] = [authors[0]!, authors[1]!];
  await muteAccount(core, reader, muted);
  const list = await createList(core, reader, { title: 'exclusive', exclusive: true });
  await addListMembers(core, list, [listed._id]);
  await markActive(core, [reader._id], 'ok');

  // Every post is in Kafka before the fan-out starts, so its first fetch holds them all.
  const posts = await Promise.all(authors.map((a) => postStatus(core, a, { text: `from ${a.username}` })));
  const messages = await readTopic(core.config, 'statuses', (m) => m.length >= AUTHORS);
  const partitions = new Set(messages.map((m) => m.partition)).size;
  expect(partitions).toBeGreaterThanOrEqual(3);

  // Reads of who mutes an author (the follows' merges ask one follower each: not counted).
  let mutesRead = 0;
  core.mongo.on('commandStarted', (e: CommandStartedEvent) => {
    const { find, filter } = e.command as { find?: unknown; filter?: Record<string, unknown> };
    if (e.commandName === 'find' && find === 'mutes' && filter && !('accountId' in filter)) mutesRead++;
  });
  pipeline = await runFanOutPipeline(core, consumerTuning);

  const home = feedKey('home', reader._id);
  const expected = posts.filter((p) => p.accountId !== muted._id && p.accountId !== listed._id).map((p) => p._id);
  await eventually(async () => (await feedIds(core.redis, home)).length >= expected.length, 30_000, 'home feed');
  const inList = await eventually(async () => {
    const ids = await feedIds(core.redis, feedKey('list', list._id));
    return ids.length > 0 && ids;
  });
  expect(new Set(await feedIds(core.redis, home))).toEqual(new Set(expected));
  expect(inList).toEqual(posts.filter((p) => p.accountId === listed._id).map((p) => p._id));
  // One shared read (two if a partition's batch came a turn late), not one per partition.
  expect(mutesRead).toBeGreaterThan(0);
  expect(mutesRead).toBeLessThan(partitions);
});
