// The client side of mastoNotifications.test.ts, run as its own Node process (masto is an ES
// module): subscribes to Web Push and to the `user` and `user:notification` streams as alice,
// says `listening`, waits for `go` on stdin, makes bob follow, carol favourite, dave reblog, erin
// mention and frank vote in alice's poll, says `voted` (the test then ends the poll), waits for the
// five notifications and prints one JSON line with what the client saw.
// Usage: node mastoNotificationsFlow.ts <input JSON>
import { createInterface } from 'node:readline';
import { createRestAPIClient, createStreamingAPIClient, type mastodon } from 'masto';

interface Input {
  url: string;
  streamingUrl: string;
  push: { endpoint: string; keys: { p256dh: string; auth: string } };
  tokens: Record<'alice' | 'bob' | 'carol' | 'dave' | 'erin' | 'frank', string>;
  alice: { id: string; username: string };
}

const input = JSON.parse(process.argv[2] ?? '{}') as Input;
const rest = (token: string) => createRestAPIClient({ url: input.url, accessToken: token });
const owner = rest(input.tokens.alice);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (o: object) => console.log(JSON.stringify(o));

async function until<T>(get: () => Promise<T | undefined>, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function collect(sub: AsyncIterable<mastodon.streaming.Event>): string[] {
  const ids: string[] = [];
  void (async () => {
    for await (const e of sub) if (e.event === 'notification') ids.push(e.payload.id);
  })().catch(() => undefined);
  return ids;
}

const subscription = await owner.v1.push.subscription.create({
  subscription: input.push,
  data: { alerts: { follow: true, favourite: true, reblog: true, mention: true, poll: true } },
  policy: 'all',
});
const stream = createStreamingAPIClient({
  streamingApiUrl: input.streamingUrl,
  accessToken: input.tokens.alice,
  implementation: WebSocket,
  retry: false,
});
const onUser = collect(stream.user.subscribe());
const onNotification = collect(stream.user.notification.subscribe());
say({ phase: 'listening' });
await lines.next();

const post = await owner.v1.statuses.create({ status: 'a post to interact with' });
await rest(input.tokens.bob).v1.accounts.$select(input.alice.id).follow();
await rest(input.tokens.carol).v1.statuses.$select(post.id).favourite();
await rest(input.tokens.dave).v1.statuses.$select(post.id).reblog();
const mention = await rest(input.tokens.erin).v1.statuses.create({ status: `@${input.alice.username} ping` });
const poll = await owner.v1.statuses.create({
  status: 'which one?',
  poll: { options: ['this', 'that'], expiresIn: 300 },
});
await rest(input.tokens.frank)
  .v1.polls.$select(poll.poll!.id)
  .votes.create({ choices: [1] });
say({ phase: 'voted' });

const list = await until(async () => {
  const got = await owner.v1.notifications.list();
  return got.length >= 5 ? got : undefined;
}, 'five notifications');
const frankPolls = await until(async () => {
  const got = await rest(input.tokens.frank).v1.notifications.list({ types: ['poll'] });
  return got.length >= 1 ? got : undefined;
}, 'the voter’s poll notification');
const grouped = await owner.v2.notifications.list();
await until(async () => (onUser.length >= 5 && onNotification.length >= 5 ? true : undefined), 'stream events');
// A moment for any duplicate to show up.
await new Promise((r) => setTimeout(r, 500));
stream.close();

say({
  phase: 'done',
  subscription,
  postId: post.id,
  mentionId: mention.id,
  pollStatusId: poll.id,
  list: list.map((n) => ({
    id: n.id,
    type: n.type,
    account: n.account.id,
    status: n.status?.id ?? null,
    pollExpired: n.status?.poll?.expired ?? null,
  })),
  frankPolls: frankPolls.map((n) => n.status?.id),
  grouped: {
    groups: grouped.notificationGroups.map((g) => ({
      type: g.type,
      count: g.notificationsCount,
      sample: g.sampleAccountIds,
    })),
    accounts: grouped.accounts.map((a) => a.id),
    statuses: grouped.statuses.map((s) => s.id),
  },
  onUser,
  onNotification,
});
process.exit(0);
