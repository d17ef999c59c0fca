// The streaming API as the masto client library uses it (one WebSocket, streams multiplexed with
// subscribe/unsubscribe messages), run as its own Node process (masto is an ES module). Prints
// one JSON line with what it observed; masto.test.ts checks it.
// Usage: node mastoStreamingFlow.ts <apiUrl> <streamingUrl> <readerToken> <clientId> <clientSecret> <authorToken> <authorId>
import { createOAuthAPIClient, createRestAPIClient, createStreamingAPIClient, type mastodon } from 'masto';

const [url, streamingApiUrl, readerToken, clientId, clientSecret, authorToken, authorId] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
const TAG = 'mastostream';

/** The sockets masto opens, with every frame they receive and how they closed. */
const sockets: { frames: { stream?: string[]; event?: string; payload?: string }[]; closeCode: number | null }[] = [];
class RecordingWebSocket extends WebSocket {
  constructor(address: string | URL, protocols?: string | string[]) {
    super(address, protocols);
    const record = { frames: [] as (typeof sockets)[number]['frames'], closeCode: null as number | null };
    sockets.push(record);
    this.addEventListener('message', (e) => record.frames.push(JSON.parse(String(e.data)) as never));
    this.addEventListener('close', (e) => (record.closeCode = e.code));
  }
}

async function until<T>(check: () => T | undefined | false, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const reader = createRestAPIClient({ url, accessToken: readerToken });
const author = createRestAPIClient({ url, accessToken: authorToken });
await reader.v1.accounts.$select(authorId).follow();
const list = await reader.v1.lists.create({ title: 'Streamed' });
await reader.v1.lists.$select(list.id).accounts.create({ accountIds: [authorId] });

const streaming = createStreamingAPIClient({
  streamingApiUrl,
  accessToken: readerToken,
  retry: false,
  implementation: RecordingWebSocket,
});

/** Events seen per subscription, and how each subscription ended. */
const seen: Record<string, mastodon.streaming.Event[]> = { user: [], local: [], hashtag: [], list: [] };
const ended: Record<string, string | null> = { user: null, local: null, hashtag: null, list: null };
const subscriptions = {
  user: streaming.user.subscribe(),
  local: streaming.public.local.subscribe(),
  hashtag: streaming.hashtag.subscribe({ tag: TAG }),
  list: streaming.list.subscribe({ list: list.id }),
};
for (const [name, sub] of Object.entries(subscriptions)) {
  void (async () => {
    try {
      for await (const event of sub) seen[name]!.push(event);
      ended[name] = 'done';
    } catch (err) {
      ended[name] = err instanceof Error ? err.constructor.name : 'error';
    }
  })();
}

const has = (name: string, event: string, id: string) =>
  seen[name]!.some(
    (e) => e.event === event && (event === 'delete' ? e.payload === id : (e.payload as { id?: string }).id === id),
  );
const names = Object.keys(subscriptions);

// Subscribing is asynchronous: probe until one post reaches all four streams.
let live = false;
for (let i = 0; i < 30 && !live; i++) {
  const probe = await author.v1.statuses.create({ status: `probe ${i} #${TAG}` });
  live = await until(() => names.every((n) => has(n, 'update', probe.id)), 'probe', 2_000).catch(() => false);
}
if (!live) throw new Error('the four subscriptions never went live');

const post = await author.v1.statuses.create({ status: `hello #${TAG}` });
await until(() => names.every((n) => has(n, 'update', post.id)), 'the update on every stream');
const streamsOfUpdate = Object.fromEntries(
  names.map((n) => [
    n,
    seen[n]!.find((e) => e.event === 'update' && (e.payload as { id: string }).id === post.id)!.stream,
  ]),
);
const content = (
  seen.user!.find((e) => e.event === 'update' && (e.payload as { id: string }).id === post.id)!
    .payload as mastodon.v1.Status
).content;

await author.v1.statuses.$select(post.id).remove();
await until(() => names.every((n) => has(n, 'delete', post.id)), 'the delete on every stream');

// Unsubscribing the hashtag stream: the server stops sending it on this socket, others go on.
subscriptions.hashtag.unsubscribe();
const socket = sockets[sockets.length - 1]!;
await new Promise((r) => setTimeout(r, 500)); // the unsubscribe message's round trip
const after = await author.v1.statuses.create({ status: `after unsubscribing #${TAG}` });
await until(() => has('local', 'update', after.id), 'the public:local update after unsubscribing');
await until(() => has('list', 'update', after.id), 'the list update after unsubscribing');
const hashtagFramesAfter = socket.frames.filter(
  (f) => f.stream?.[0] === 'hashtag' && f.payload?.includes(`"id":"${after.id}"`),
).length;

// Revoking the token closes the socket; masto (retry: false) then gives up.
const socketsBeforeRevocation = sockets.length;
await createOAuthAPIClient({ url }).revoke({ clientId, clientSecret, token: readerToken });
await until(() => socket.closeCode !== null, 'the socket to close after revocation', 15_000);
await until(() => ended.user !== null, 'the user subscription to end', 15_000);

console.log(
  JSON.stringify({
    socketsBeforeRevocation,
    streamsOfUpdate,
    content,
    hashtagFramesAfter,
    closeCode: socket.closeCode,
    userEnded: ended.user,
  }),
);
streaming.close();
process.exit(0);
