// `services/main.ts all` (what `npm start` runs) in a child process: its pipelines read through two
// shared consumer groups (ADR 0013) and still do everything a post asks of them — the follower's
// home timeline (fan-out), the mention notification (notifications), the search index
// (background) — with one group per latency class instead of one per pipeline.
import { createKafka } from '../../services/core/events/kafka.ts';
import { createLogger } from '../../services/core/logger.ts';
import type { Core } from '../../services/core/context.ts';
import { testConfig } from '../support/config.ts';
import { closeTestCore, createTestCore, eventually } from '../support/core.ts';
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { killChild, serverEnv, startMain, started, type MainRun } from '../support/processes.ts';

const config = testConfig({ KAFKA_PARTITIONS: '2' });
let core: Core;
let server: MainRun;
let base = '';

beforeAll(async () => {
  ({ core } = await createTestCore(config));
  server = startMain(['all'], serverEnv(config));
  base = `http://127.0.0.1:${(await started(server)).port}`;
});

afterAll(async () => {
  if (server) await killChild(server);
  if (core) await closeTestCore(core);
});

async function call(method: string, path: string, user: TestUser, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${user.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & Array<Record<string, unknown>> };
}

async function groupsWithOffsets(): Promise<string[]> {
  const admin = createKafka(config, createLogger('fatal', 'test'), 'test-groups').admin();
  await admin.connect();
  try {
    const prefix = `${config.kafkaTopicPrefix}.`;
    const out: string[] = [];
    for (const { groupId } of (await admin.listGroups()).groups) {
      if (!groupId.startsWith(prefix)) continue;
      const offsets = await admin.fetchOffsets({ groupId, topics: [`${prefix}statuses`] });
      if (offsets.some((t) => t.partitions.some((p) => Number(p.offset) >= 0))) out.push(groupId.slice(prefix.length));
    }
    return out.sort();
  } finally {
    await admin.disconnect();
  }
}

it('fans out, notifies and indexes a post through the shared consumers', async () => {
  const [alice, bob] = await Promise.all([createTestUser(core), createTestUser(core)]);
  expect((await call('POST', `/api/v1/accounts/${alice.account._id}/follow`, bob)).status).toBe(200);
  const posted = await call('POST', '/api/v1/statuses', alice, {
    status: `@${bob.account.username} shared consumers say hello #sharedconsumers`,
  });
  expect(posted.status).toBe(200);
  const id = posted.body.id as string;

  // fan-out (all-prompt): in bob's home timeline.
  await eventually(async () => (await call('GET', '/api/v1/timelines/home', bob)).body.some((s) => s.id === id));
  // notifications (all-prompt): bob is told of the mention.
  await eventually(async () =>
    (await call('GET', '/api/v1/notifications?types[]=mention', bob)).body.some(
      (n) => (n.status as { id?: string } | null)?.id === id,
    ),
  );
  // search index (all-background): alice finds her own post.
  await eventually(async () => {
    const found = await call('GET', '/api/v2/search?type=statuses&q=consumers', alice);
    return (found.body.statuses as Array<{ id: string }>).some((s) => s.id === id);
  });

  // The statuses topic is read by the two shared groups and link previews (which waits on other
  // servers, so it keeps a group of its own) — not by a group per pipeline.
  await eventually(async () => (await groupsWithOffsets()).length === 3);
  expect(await groupsWithOffsets()).toEqual(['all-background', 'all-prompt', 'link-previews']);
});
