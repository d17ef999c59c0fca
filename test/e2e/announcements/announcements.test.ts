// Announcements end to end: administrators write and publish them (CLI commands), users list,
// dismiss and react to them over HTTP, and signed-in `user` streams receive `announcement`,
// `announcement.reaction` and `announcement.delete` events from the real streaming server.
import { writeFile, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Core } from '../../../services/core/context.ts';
import { startStreamingServer, type StreamingServer } from '../../../services/streaming/server.ts';
import { channelName, timelineChannels } from '../../../services/core/streaming/channels.ts';
import { parseSiteCommand } from '../../../services/cli/siteCommands.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { channelSubscribers, eventually } from '../../support/core.ts';
import { png } from '../../support/mediaFiles.ts';

let api: TestApi;
let core: Core;
let streaming: StreamingServer;
let alice: TestUser;
let bob: TestUser;

async function admin(...argv: string[]): Promise<string[]> {
  const command = parseSiteCommand(argv);
  if (!command) throw new Error(`not a site command: ${argv.join(' ')}`);
  const lines: string[] = [];
  await command(core, (l) => lines.push(l));
  return lines;
}

interface Received {
  stream?: string[];
  event?: string;
  payload?: string;
}

class Client {
  readonly messages: Received[] = [];
  readonly socket: WebSocket;
  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.addEventListener('message', (e) => this.messages.push(JSON.parse(String(e.data)) as Received));
  }

  static open(token: string): Promise<Client> {
    const socket = new WebSocket(
      `ws://127.0.0.1:${streaming.port}/api/v1/streaming?stream=user&access_token=${encodeURIComponent(token)}`,
    );
    return new Promise((resolve, reject) => {
      socket.addEventListener('open', () => resolve(new Client(socket)), { once: true });
      socket.addEventListener('error', () => reject(new Error('WebSocket refused')), { once: true });
    });
  }

  waitFor(predicate: (m: Received) => boolean, what: string): Promise<Received> {
    return eventually(async () => this.messages.find(predicate), 20_000, what);
  }
}

beforeAll(async () => {
  api = await startTestApi({}, { mediaDir: true });
  core = api.core;
  streaming = await startStreamingServer({ host: '127.0.0.1', port: 0, logger: core.logger, core });
  alice = await createTestUser(core, { username: 'alice' });
  bob = await createTestUser(core, { username: 'bob' });
});

afterAll(async () => {
  await streaming?.stop(1000);
  await api?.close();
});

const list = (user: TestUser, query = '') => api.call('GET', `/api/v1/announcements${query}`, user.token);

describe('announcements', () => {
  let client: Client;
  let id: string;

  it('needs a signed-in user', async () => {
    expect((await api.call('GET', '/api/v1/announcements')).status).toBe(401);
  });

  it('checks the time range: all_day only with one, both ends or none, end after start', async () => {
    await expect(admin('announcements', 'create', 'x', '--all-day')).rejects.toThrow(/time range/);
    await expect(admin('announcements', 'create', 'x', '--starts-at', '2030-01-01T00:00:00Z')).rejects.toThrow(
      /both a start and an end/,
    );
    await expect(
      admin('announcements', 'create', 'x', '--starts-at', '2030-01-02T00:00:00Z', '--ends-at', '2030-01-01T00:00:00Z'),
    ).rejects.toThrow(/before the start/);
    await expect(admin('announcements', 'create', '   ')).rejects.toThrow(/blank/);
  });

  it('drafts stay hidden; publishing streams an `announcement` event to user streams', async () => {
    const [created] = await admin(
      'announcements',
      'create',
      'Maintenance tonight, ask @alice #downtime',
      '--starts-at',
      '2030-01-01T00:00:00Z',
      '--ends-at',
      '2030-01-02T00:00:00Z',
      '--all-day',
    );
    id = created.split(' ')[1];
    expect((await list(alice)).body).toEqual([]);

    client = await Client.open(alice.token);
    const channel = channelName(core.config, timelineChannels.announcements());
    await eventually(
      async () => (await channelSubscribers(core.redis, channel)) > 0 || undefined,
      10_000,
      'the user stream listens to announcements',
    );
    await admin('announcements', 'publish', id);
    const event = await client.waitFor((m) => m.event === 'announcement', 'announcement event');
    expect(event.stream).toEqual(['user']);
    const streamed = JSON.parse(event.payload ?? '{}');
    expect(streamed).toMatchObject({ id, all_day: true, starts_at: '2030-01-01T00:00:00.000Z' });
    expect(streamed).not.toHaveProperty('read');

    const { status, body } = await list(alice);
    expect(status).toBe(200);
    expect(body).toEqual([
      {
        id,
        content: expect.stringContaining('Maintenance tonight'),
        starts_at: '2030-01-01T00:00:00.000Z',
        ends_at: '2030-01-02T00:00:00.000Z',
        all_day: true,
        published_at: expect.any(String),
        updated_at: expect.any(String),
        read: false,
        mentions: [{ id: String(alice.account._id), username: 'alice', acct: 'alice', url: expect.any(String) }],
        statuses: [],
        tags: [{ name: 'downtime', url: expect.stringMatching(/\/tags\/downtime$/) }],
        emojis: [],
        reactions: [],
      },
    ]);
    expect(body[0].content).toContain('class="u-url mention"');
  });

  it('reactions: Unicode and custom emoji, counted per name, streamed, `me` per viewer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fedisrv-ann-'));
    try {
      await writeFile(join(dir, 'blobcat.png'), await png(64, 64));
      await admin('emoji', 'add', 'blobcat', join(dir, 'blobcat.png'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const thumbs = encodeURIComponent('👍');
    expect((await api.call('PUT', `/api/v1/announcements/${id}/reactions/${thumbs}`, alice.token)).body).toEqual({});
    const reaction = await client.waitFor((m) => m.event === 'announcement.reaction', 'reaction event');
    expect(JSON.parse(reaction.payload ?? '')).toEqual({ name: '👍', count: 1, announcement_id: id });
    await api.call('PUT', `/api/v1/announcements/${id}/reactions/${thumbs}`, alice.token); // twice is once
    await api.call('PUT', `/api/v1/announcements/${id}/reactions/${thumbs}`, bob.token);
    await api.call('PUT', `/api/v1/announcements/${id}/reactions/blobcat`, bob.token);
    const bad = await api.call('PUT', `/api/v1/announcements/${id}/reactions/notanemoji`, bob.token);
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ error: 'Validation failed: Name is not a recognized emoji' });

    const [forAlice] = (await list(alice)).body;
    expect(forAlice.reactions).toEqual([
      { name: '👍', count: 2, me: true },
      {
        name: 'blobcat',
        count: 1,
        me: false,
        url: expect.stringMatching(/\.png$/),
        static_url: expect.stringMatching(/\.png$/),
      },
    ]);
    expect((await list(bob)).body[0].reactions[1].me).toBe(true);

    expect((await api.call('DELETE', `/api/v1/announcements/${id}/reactions/${thumbs}`, alice.token)).status).toBe(200);
    await client.waitFor(
      (m) => m.event === 'announcement.reaction' && JSON.parse(m.payload ?? '{}').count === 1,
      'the lower count',
    );
    expect((await list(alice)).body[0].reactions[0]).toEqual({ name: '👍', count: 1, me: false });
  });

  it('at most 8 distinct reactions', async () => {
    const emojis = ['😀', '😂', '🎉', '❤️', '🔥', '🙏'];
    for (const e of emojis)
      expect(
        (await api.call('PUT', `/api/v1/announcements/${id}/reactions/${encodeURIComponent(e)}`, bob.token)).status,
      ).toBe(200);
    const ninth = await api.call('PUT', `/api/v1/announcements/${id}/reactions/${encodeURIComponent('🐱')}`, bob.token);
    expect(ninth.status).toBe(422);
    expect(ninth.body.error).toBe('Validation failed: Maximum number of reactions reached');
  });

  it('dismissing hides it unless with_dismissed, where it is read', async () => {
    expect((await api.call('POST', `/api/v1/announcements/${id}/dismiss`, alice.token)).body).toEqual({});
    expect((await api.call('POST', `/api/v1/announcements/${id}/dismiss`, alice.token)).status).toBe(200);
    expect((await list(alice)).body).toEqual([]);
    const all = (await list(alice, '?with_dismissed=true')).body;
    expect(all).toHaveLength(1);
    expect(all[0].read).toBe(true);
    expect((await list(bob)).body[0].read).toBe(false);
    expect((await api.call('POST', '/api/v1/announcements/999999/dismiss', alice.token)).status).toBe(404);
    expect((await api.call('POST', '/api/v1/announcements/nope/dismiss', alice.token)).status).toBe(404);
  });

  it("hostile input gets a 4xx in Mastodon's error format", async () => {
    const names = ['a'.repeat(300), '%00', '%24where', '..%2F..%2Fetc', '%F0%9F', 'blob%20cat', '%E2%80%AE', ''];
    for (const name of names) {
      const res = await api.call('PUT', `/api/v1/announcements/${id}/reactions/${name}`, bob.token);
      expect([name, res.status < 500 && res.status >= 400]).toEqual([name, true]);
      expect(res.body).toMatchObject({ error: expect.any(String) });
    }
    for (const bad of ['-1', '99999999999999999999999', '1e3', '%00', 'null']) {
      const res = await api.call('POST', `/api/v1/announcements/${bad}/dismiss`, bob.token);
      expect([bad, res.status]).toEqual([bad, 404]);
    }
    for (const q of ['with_dismissed[]=1', 'with_dismissed[a]=b', `with_dismissed=${'x'.repeat(5000)}`]) {
      const res = await api.call('GET', `/api/v1/announcements?${q}`, bob.token);
      expect([q, res.status < 500]).toEqual([q, true]);
    }
  });

  it('unpublishing streams `announcement.delete` and hides it', async () => {
    await admin('announcements', 'unpublish', id);
    const deleted = await client.waitFor((m) => m.event === 'announcement.delete', 'delete event');
    expect(deleted.payload).toBe(id);
    expect((await list(bob)).body).toEqual([]);
    expect(
      (await api.call('PUT', `/api/v1/announcements/${id}/reactions/${encodeURIComponent('👍')}`, bob.token)).status,
    ).toBe(404);
    await admin('announcements', 'delete', id);
    await expect(admin('announcements', 'publish', id)).rejects.toThrow(/No announcement/);
    client.socket.close();
  });
});

describe('admin announcements API', () => {
  it('creates, edits, publishes, unpublishes and deletes for roles with manage_announcements', async () => {
    const scopes = ['read', 'write', 'admin:read', 'admin:write'];
    const adminUser = await createTestUser(core, { username: 'annadmin', role: 'Admin', scopes });
    const moderator = await createTestUser(core, { username: 'annmod', role: 'Moderator', scopes });
    const client = await Client.open(bob.token);
    const channel = channelName(core.config, timelineChannels.announcements());
    await eventually(
      async () => (await channelSubscribers(core.redis, channel)) > 0 || undefined,
      10_000,
      'the user stream listens to announcements',
    );
    try {
      const refused = await api.call('POST', '/api/v1/admin/announcements', moderator.token, { text: 'x' });
      expect(refused.status).toBe(403);
      const invalid = await api.call('POST', '/api/v1/admin/announcements', adminUser.token, {
        text: 'x',
        all_day: true,
      });
      expect(invalid.status).toBe(422);
      expect(invalid.body.error).toMatch(/^Validation failed: /);

      const created = await api.call('POST', '/api/v1/admin/announcements', adminUser.token, { text: 'Draft' });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ text: 'Draft', published: false, content: '<p>Draft</p>' });
      const id = created.body.id as string;
      const edited = await api.call('PUT', `/api/v1/admin/announcements/${id}`, adminUser.token, {
        text: 'Party on Friday',
        starts_at: '2030-05-03T00:00:00Z',
        ends_at: '2030-05-04T00:00:00Z',
        all_day: true,
      });
      expect(edited.body).toMatchObject({
        text: 'Party on Friday',
        all_day: true,
        starts_at: '2030-05-03T00:00:00.000Z',
      });

      expect(
        (await api.call('POST', `/api/v1/admin/announcements/${id}/publish`, adminUser.token)).body.published,
      ).toBe(true);
      await client.waitFor(
        (m) => m.event === 'announcement' && JSON.parse(m.payload ?? '{}').id === id,
        'the published announcement',
      );
      expect((await list(bob)).body.map((a: { id: string }) => a.id)).toContain(id);
      expect((await api.call('GET', '/api/v1/admin/announcements', adminUser.token)).body).toContainEqual(
        expect.objectContaining({ id, published: true }),
      );

      expect((await api.call('DELETE', `/api/v1/admin/announcements/${id}`, adminUser.token)).body).toEqual({});
      await client.waitFor((m) => m.event === 'announcement.delete' && m.payload === id, 'the deletion');
      expect((await api.call('GET', `/api/v1/admin/announcements/${id}`, adminUser.token)).status).toBe(404);
      expect((await api.call('POST', `/api/v1/admin/announcements/${id}/publish`, adminUser.token)).status).toBe(404);
    } finally {
      client.socket.close();
    }
  });
});
