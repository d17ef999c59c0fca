// The streaming API through a real client library (masto's streaming client, one WebSocket):
// user, public:local, hashtag and list streams, deletes, unsubscribing one stream, and a revoked
// token closing the socket.
import { runFanOutPipeline } from '../../../pipelines/fanout/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startStreamingServer, type StreamingServer } from '../../../services/streaming/server.ts';
import { issueAccessToken } from '../../../services/core/oauth/tokens.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestApp, createTestUser } from '../../support/fixtures.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { runNodeForJson } from '../../support/processes.ts';

let api: TestApi;
let pipeline: Pipeline;
let streaming: StreamingServer;

beforeAll(async () => {
  api = await startTestApi();
  pipeline = await runFanOutPipeline(api.core, consumerTuning);
  streaming = await startStreamingServer({ host: '127.0.0.1', port: 0, logger: api.core.logger, core: api.core });
});

afterAll(async () => {
  await streaming?.stop(1000);
  await pipeline?.stop();
  await api?.close();
});

it('masto streams user, public:local, hashtag and list on one socket, unsubscribes, and is closed on revocation', async () => {
  const reader = await createTestUser(api.core);
  const author = await createTestUser(api.core);
  // A token of an app whose secret the client knows, so that it can revoke it itself.
  const app = await createTestApp(api.core);
  const { token } = await issueAccessToken(api.core, {
    appId: app.app._id,
    userId: reader.user._id,
    scopes: ['read', 'write', 'follow'],
    reuse: false,
  });
  const seen = await runNodeForJson('test/e2e/streaming/mastoStreamingFlow.ts', [
    api.server.url,
    `ws://127.0.0.1:${streaming.port}`,
    token,
    app.clientId,
    app.clientSecret,
    author.token,
    String(author.account._id),
  ]);
  expect(seen.streamsOfUpdate).toEqual({
    user: ['user'],
    local: ['public:local'],
    hashtag: ['hashtag', 'mastostream'],
    list: ['list', expect.any(String)],
  });
  expect(seen.content).toContain('hello');
  expect(seen.hashtagFramesAfter).toBe(0);
  expect(seen.closeCode).toBe(1008);
  expect(seen.userEnded).not.toBeNull();
  // All four subscriptions, their unsubscribe and the revocation: one socket.
  expect(seen.socketsBeforeRevocation).toBe(1);
}, 120_000);
