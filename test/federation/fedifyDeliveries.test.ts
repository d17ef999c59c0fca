// Our deliveries as an independent implementation sees them: an inbox built on Fedify
// (test/federation/peers/fedifyInbox.ts, its own process) verifies each POST's HTTP signature with
// Fedify's verifier, fetching our actor and key from our server with its own document loader, and
// reads each activity with Fedify's JSON-LD vocabulary, so a signature Fedify rejects, an @context
// that loses a term or an id that does not dereference fails this test.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createFollow } from '../../services/core/graph/follow.ts';
import { runDeliveryPipeline } from '../../pipelines/delivery/index.ts';
import { startInstance, type TestInstance } from '../support/instance.ts';
import { createTestUser } from '../support/fixtures.ts';
import { eventually } from '../support/core.ts';
import { consumerTuning } from '../support/kafka.ts';
import { createRemoteAccount, createRemoteStatus } from '../support/remoteAccounts.ts';

interface Seen {
  path: string;
  keyOwner: string | null;
  error: string | null;
  type?: string;
  id?: string | null;
  actor?: string | null;
  objectType?: string | null;
  objectId?: string | null;
  content?: string;
}

let ours: TestInstance;
let peer: ChildProcess;
let peerUrl: string;
let pipeline: { stop(): Promise<void> };
const seen: Seen[] = [];

beforeAll(async () => {
  ours = await startInstance();
  peer = spawn(process.execPath, [join(import.meta.dirname, 'peers', 'fedifyInbox.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  peerUrl = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    peer.stdout!.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const m = /^listening (\d+)$/.exec(line);
        if (m) resolve(`http://127.0.0.1:${m[1]}`);
        else if (line.startsWith('{')) seen.push(JSON.parse(line) as Seen);
      }
    });
    peer.once('exit', (code) => reject(new Error(`Fedify peer exited with ${code}`)));
  });
  pipeline = await runDeliveryPipeline(ours.core, {
    settings: { partitions: 2 },
    planner: consumerTuning,
    worker: { sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100 },
  });
});

afterAll(async () => {
  await pipeline?.stop();
  if (peer && peer.exitCode === null) {
    const exited = new Promise((r) => peer.once('exit', r));
    peer.kill('SIGTERM');
    await exited;
  }
  await ours?.close();
});

test('Fedify verifies our signatures and reads our Accept, Create, Like, Announce, Follow and Undo', async () => {
  const alice = await createTestUser(ours.core, { username: 'alice' });
  const bob = await createRemoteAccount(ours.core, peerUrl, 'bob', { domain: 'fedify.example', sharedInbox: false });
  await createFollow(ours.core, bob, alice.account, {}, null);
  const post = await ours.call('POST', '/api/v1/statuses', alice.token, { status: 'hello #fedify' });
  expect(post.status).toBe(200);
  const remote = await createRemoteStatus(ours.core, bob);
  expect((await ours.call('POST', `/api/v1/statuses/${remote._id}/favourite`, alice.token)).status).toBe(200);
  expect((await ours.call('POST', `/api/v1/statuses/${remote._id}/reblog`, alice.token)).status).toBe(200);
  const carol = await createRemoteAccount(ours.core, peerUrl, 'carol', {
    domain: 'fedify.example',
    sharedInbox: false,
  });
  expect((await ours.call('POST', `/api/v1/accounts/${carol._id}/follow`, alice.token)).status).toBe(200);
  expect((await ours.call('POST', `/api/v1/accounts/${carol._id}/unfollow`, alice.token)).status).toBe(200);

  await eventually(async () => seen.length >= 6, 30_000, 'six deliveries at the Fedify peer');
  for (const s of seen) {
    expect(s.error).toBeNull();
    expect(s.keyOwner).toBe(alice.account.uri);
    expect(s.actor).toBe(alice.account.uri);
  }
  const byType = (t: string) => seen.filter((s) => s.type === t);
  expect(byType('Accept')).toHaveLength(1);
  expect(byType('Accept')[0].objectType).toBe('Follow');
  const create = byType('Create')[0];
  expect(create.objectType).toBe('Note');
  expect(create.objectId).toBe(`${alice.account.uri}/statuses/${post.body.id as string}`);
  expect(create.content).toContain('hello');
  expect(byType('Like')[0].objectId).toBe(remote.uri);
  expect(byType('Announce')[0].objectId).toBe(remote.uri);
  expect(byType('Follow')[0].objectId).toBe(carol.uri);
  expect(byType('Undo')[0].objectType).toBe('Follow');
}, 90_000);
