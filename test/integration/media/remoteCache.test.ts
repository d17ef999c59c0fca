// Remote media served from our own storage: a remote status's attachments are copied by the media
// pipeline through the SSRF-safe client (thumbnail and blurhash made here, `remote_url` kept);
// what is not cached (removed by `cli media remove`, the scheduler's clean-up, or never fetched)
// is fetched again on first request by GET /media_proxy/:id; what cannot be fetched (private
// address, not media) stays uncached and the proxy answers 404.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { eventually } from '../../support/eventually.ts';
import { png } from '../../support/mediaFiles.ts';
import { createRemoteAccount } from '../../support/remoteAccounts.ts';
import { runMediaPipeline } from '../../../pipelines/media/index.ts';
import { createRemoteStatus } from '../../../services/core/activitypub/ingress/statuses.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { mediaAttachments } from '../../../services/core/model/media.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { customEmojis } from '../../../services/core/model/customEmojis.ts';
import { upsertRemoteActor } from '../../../services/core/activitypub/actors.ts';
import { upsertRemoteEmojis } from '../../../services/core/emojis/remoteEmojis.ts';
import { vacuumMediaCache } from '../../../services/core/media/remoteCache.ts';
import { parseMediaCommand } from '../../../services/cli/mediaCommands.ts';
import { createFollow } from '../../../services/core/graph/follow.ts';
import { createWebSession } from '../../../services/core/oauth/sessions.ts';

jest.setTimeout(60_000);

describe('remote media cache', () => {
  let api: TestApi;
  let media: { stop(): Promise<void> };
  let origin: http.Server;
  let originBase: string;
  let viewer: TestUser;
  const hits: string[] = [];
  let picture: Buffer;
  let face: Buffer;
  let blob: Buffer;

  beforeAll(async () => {
    picture = await png(64, 48);
    face = await png(500, 500);
    blob = await png(32, 32);
    origin = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/files/pic.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(picture);
      } else if (req.url?.startsWith('/files/blob')) {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(blob);
      } else if (req.url?.startsWith('/files/face')) {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(face);
      } else if (req.url === '/files/page.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end('<html>not a picture</html>');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originBase = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    api = await startTestApi(
      {
        FEDERATION_ALLOW_HTTP: 'true',
        ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32',
        LOCAL_DOMAIN: 'cache.example',
        MEDIA_CACHE_RETENTION_PERIOD: '1',
      },
      { mediaDir: true },
    );
    media = await runMediaPipeline(api.core, consumerTuning);
    viewer = await createTestUser(api.core, { username: 'viewer' });
  });

  afterAll(async () => {
    await media?.stop();
    await api?.close();
    await new Promise((resolve) => origin?.close(resolve));
  });

  const remoteStatus = async (n: number, attachment: Array<Record<string, unknown>>, followersOnly = false) => {
    const eve = await createRemoteAccount(api.core, originBase, `eve${n}`);
    const status = await createRemoteStatus(
      api.core,
      eve,
      {
        id: `${originBase}/users/eve${n}/statuses/${n}`,
        type: 'Note',
        attributedTo: eve.uri,
        content: '<p>a picture</p>',
        to: [followersOnly ? `${eve.uri}/followers` : 'https://www.w3.org/ns/activitystreams#Public'],
        published: new Date().toISOString(),
        attachment,
      },
      { requested: true },
    );
    expect(status).not.toBeNull();
    return status!;
  };
  const attachmentOf = async (statusId: bigint) =>
    (await api.call('GET', `/api/v1/statuses/${statusId}`, viewer.token)).body.media_attachments[0];

  it('caches a remote picture, serves it from here, and fetches it again after a clean-up', async () => {
    const remoteUrl = `${originBase}/files/pic.png`;
    const status = await remoteStatus(1, [{ type: 'Document', mediaType: 'image/png', url: remoteUrl, name: 'alt' }]);
    // Until the media pipeline has copied it, the attachment names our proxy: poll (a throw inside
    // the check would end the wait at once).
    const cached = await eventually(
      async () => {
        const a = await attachmentOf(status._id);
        return /^https?:\/\/cache\.example\/system\/media_attachments\/files\/\d+\/original\//.test(a.url) && a;
      },
      30_000,
      'the attachment copied here',
    );
    expect(cached).toMatchObject({
      type: 'image',
      remote_url: remoteUrl,
      description: 'alt',
      meta: { original: { width: 64, height: 48 } },
    });
    expect(cached.preview_url).toMatch(/\/system\/media_attachments\/files\/\d+\/small\//);
    expect(cached.blurhash).toEqual(expect.any(String));
    expect(hits.filter((h) => h === '/files/pic.png')).toHaveLength(1);
    const file = await fetch(`${api.server.url}${new URL(cached.url).pathname}`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');

    // `cli media remove --days 0`: the file goes, the record stays, the proxy takes over.
    const lines: string[] = [];
    await parseMediaCommand('media', 'remove', ['--days', '0'])!(api.core, (l) => lines.push(l));
    expect(lines.join('\n')).toMatch(/^Removed [1-9]\d* cached media attachments older than 0 days$/);
    expect((await fetch(`${api.server.url}${new URL(cached.url).pathname}`)).status).toBe(404);
    const uncached = await attachmentOf(status._id);
    expect(uncached).toMatchObject({
      url: `${api.core.config.baseUrl}/media_proxy/${cached.id}/original`,
      preview_url: `${api.core.config.baseUrl}/media_proxy/${cached.id}/small`,
      remote_url: remoteUrl,
    });

    // The first request fetches it again and redirects to our copy.
    const proxied = await fetch(`${api.server.url}/media_proxy/${cached.id}/small`, { redirect: 'manual' });
    expect(proxied.status).toBe(302);
    expect(proxied.headers.get('location')).toMatch(/\/system\/media_attachments\/files\/\d+\/small\//);
    expect(hits.filter((h) => h === '/files/pic.png')).toHaveLength(2);
    expect((await attachmentOf(status._id)).url).toMatch(/\/system\/media_attachments\/files\/\d+\/original\//);

    // The scheduler's clean-up drops copies older than MEDIA_CACHE_RETENTION_PERIOD (1 day).
    expect(await vacuumMediaCache(api.core, Date.now())).toBe(0);
    expect(await vacuumMediaCache(api.core, Date.now() + 2 * 86_400_000)).toBeGreaterThanOrEqual(1);
    expect((await attachmentOf(status._id)).url).toContain('/media_proxy/');
  });

  it('leaves what it may not or cannot fetch uncached, and the proxy answers 404', async () => {
    const status = await remoteStatus(2, [
      { type: 'Document', mediaType: 'image/png', url: 'http://10.1.2.3/secret.png' },
      { type: 'Document', mediaType: 'image/png', url: `${originBase}/files/page.png` },
    ]);
    const ids = status.mediaIds;
    expect(ids).toHaveLength(2);
    // The pipeline tried both (the origin saw the second) and cached neither.
    await eventually(async () => hits.includes('/files/page.png'), 30_000, 'the origin asked for the page');
    for (const id of ids) {
      const res = await fetch(`${api.server.url}/media_proxy/${id}/original`, { redirect: 'manual' });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'Record not found' });
      const doc = await collection(api.core.db, mediaAttachments).findOne({ _id: id });
      expect(doc?.files.original).toBeNull();
    }
    expect((await fetch(`${api.server.url}/media_proxy/12345678/original`)).status).toBe(404);
    expect((await fetch(`${api.server.url}/media_proxy/${ids[0]}/huge`)).status).toBe(404);
  });

  it("serves a followers-only post's media to its followers only (bearer token or page session)", async () => {
    const status = await remoteStatus(
      8,
      [{ type: 'Document', mediaType: 'image/png', url: `${originBase}/files/blob8.png` }],
      true,
    );
    const eve = (await collection(api.core.db, accounts).findOne({ _id: status.accountId }))!;
    expect(status.visibility).toBe('private');
    const path = `/media_proxy/${status.mediaIds[0]}/original`;
    const get = (headers: Record<string, string> = {}) =>
      fetch(`${api.server.url}${path}`, { redirect: 'manual', headers });
    const stranger = await createTestUser(api.core, { username: 'stranger' });
    const follower = await createTestUser(api.core, { username: 'follower' });
    await createFollow(api.core, follower.account, eve, {}, null);

    expect((await get()).status).toBe(404);
    expect((await get({ authorization: `Bearer ${stranger.token}` })).status).toBe(404);
    // A bad token is ignored, as on a page: still nobody.
    expect((await get({ authorization: 'Bearer nope' })).status).toBe(404);
    const withToken = await get({ authorization: `Bearer ${follower.token}` });
    expect(withToken.status).toBe(302);
    expect(withToken.headers.get('location')).toMatch(/\/system\/media_attachments\/files\/\d+\/original\//);
    const session = await createWebSession(api.core, follower.user._id);
    expect((await get({ cookie: `theme=dark; _session_id=${session}` })).status).toBe(302);
    const strangerSession = await createWebSession(api.core, stranger.user._id);
    expect((await get({ cookie: `_session_id=${strangerSession}` })).status).toBe(404);
  });

  it('caches remote avatars and headers, and fetches a changed one on first request', async () => {
    const uri = `${originBase}/users/frank`;
    const actor = {
      '@context': 'https://www.w3.org/ns/activitystreams',
      id: uri,
      type: 'Person',
      preferredUsername: 'frank',
      inbox: `${uri}/inbox`,
      icon: { type: 'Image', mediaType: 'image/png', url: `${originBase}/files/face-1.png` },
      image: { type: 'Image', mediaType: 'image/png', url: `${originBase}/files/face-header.png` },
    };
    const frank = await upsertRemoteActor(api.core, actor);
    const entity = async () => (await api.call('GET', `/api/v1/accounts/${frank._id}`)).body;
    // The media pipeline copies both, cropped like local uploads.
    const cached = await eventually(async () => {
      const e = await entity();
      return /\/system\/accounts\/avatars\//.test(e.avatar) && /\/system\/accounts\/headers\//.test(e.header) && e;
    });
    const avatar = await fetch(`${api.server.url}${new URL(cached.avatar).pathname}`);
    expect(avatar.status).toBe(200);
    const { default: sharp } = await import('sharp');
    expect(await sharp(Buffer.from(await avatar.arrayBuffer())).metadata()).toMatchObject({ width: 400, height: 400 });

    // A new avatar on its server: until copied, the entity names our proxy, which fetches it.
    await collection(api.core.db, accounts).updateOne(
      { _id: frank._id },
      { $set: { avatarRemoteUrl: `${originBase}/files/face-2.png` } },
    );
    const stale = await entity();
    expect(stale.avatar).toBe(`${api.core.config.baseUrl}/media_proxy/accounts/${frank._id}/avatar`);
    expect(stale.avatar_static).toBe(`${api.core.config.baseUrl}/media_proxy/accounts/${frank._id}/avatar_static`);
    const proxied = await fetch(`${api.server.url}/media_proxy/accounts/${frank._id}/avatar`, { redirect: 'manual' });
    expect(proxied.status).toBe(302);
    expect(hits).toContain('/files/face-2.png');
    const fresh = await entity();
    expect(fresh.avatar).toMatch(/\/system\/accounts\/avatars\//);
    expect(fresh.avatar).not.toBe(cached.avatar);
    expect(proxied.headers.get('location')).toBe(fresh.avatar);
    // The replaced copy is gone; local accounts and unknown kinds have no proxy.
    expect((await fetch(`${api.server.url}${new URL(cached.avatar).pathname}`)).status).toBe(404);
    expect((await fetch(`${api.server.url}/media_proxy/accounts/${viewer.account._id}/avatar`)).status).toBe(404);
    expect((await fetch(`${api.server.url}/media_proxy/accounts/${frank._id}/banner`)).status).toBe(404);
  });

  it('cli media remove --prune-profiles / --remove-headers drop old remote profile images, sparing followed accounts', async () => {
    const actorOf = (name: string) => {
      const uri = `${originBase}/users/${name}`;
      return {
        '@context': 'https://www.w3.org/ns/activitystreams',
        id: uri,
        type: 'Person',
        preferredUsername: name,
        inbox: `${uri}/inbox`,
        icon: { type: 'Image', mediaType: 'image/png', url: `${originBase}/files/face-${name}.png` },
        image: { type: 'Image', mediaType: 'image/png', url: `${originBase}/files/face-${name}-h.png` },
      };
    };
    const [gil, hal, ida] = [
      await upsertRemoteActor(api.core, actorOf('gil')),
      await upsertRemoteActor(api.core, actorOf('hal')),
      await upsertRemoteActor(api.core, actorOf('ida')),
    ];
    const entity = async (id: bigint) => (await api.call('GET', `/api/v1/accounts/${id}`)).body;
    const copied = async (id: bigint) => {
      const e = await entity(id);
      return /\/system\/accounts\/avatars\//.test(e.avatar) && /\/system\/accounts\/headers\//.test(e.header) && e;
    };
    const before = await Promise.all([gil, hal, ida].map((a) => eventually(() => copied(a._id))));
    // Ida is followed here; all three were last updated a week ago.
    // (An accepted follow: a request to a remote account is pending until its server answers.)
    await createFollow(api.core, viewer.account, ida, {}, null);
    const weekAgo = new Date(Date.now() - 8 * 86_400_000);
    await collection(api.core.db, accounts).updateMany(
      { _id: { $in: [gil._id, hal._id, ida._id] } },
      { $set: { updatedAt: weekAgo, lastWebfingeredAt: weekAgo } },
    );
    const run = async (...args: string[]) => {
      const lines: string[] = [];
      await parseMediaCommand('media', 'remove', args)!(api.core, (l) => lines.push(l));
      return lines;
    };
    expect(() => parseMediaCommand('media', 'remove', ['--prune-profiles', '--remove-headers'])).toThrow(
      '--prune-profiles and --remove-headers should not be specified simultaneously',
    );
    expect(() => parseMediaCommand('media', 'remove', ['--include-follows'])).toThrow(
      '--include-follows can only be used with --prune-profiles or --remove-headers',
    );
    // A dry run counts and removes nothing; recent accounts (--days 30) are left alone.
    expect((await run('--prune-profiles', '--dry-run')).join()).toMatch(/of \d+ accounts .*\(DRY RUN\)/);
    expect((await copied(gil._id)).avatar).toBe(before[0].avatar);
    await run('--prune-profiles', '--days', '30');
    expect((await copied(gil._id)).avatar).toBe(before[0].avatar);

    // --remove-headers: Gil's header copy goes (the entity names the proxy), his avatar stays.
    await run('--remove-headers');
    const gilAfter = await entity(gil._id);
    expect(gilAfter.avatar).toBe(before[0].avatar);
    expect(gilAfter.header).toBe(`${api.core.config.baseUrl}/media_proxy/accounts/${gil._id}/header`);
    expect((await fetch(`${api.server.url}${new URL(before[0].header).pathname}`)).status).toBe(404);

    // --prune-profiles: Hal loses both; Ida, followed here, keeps hers.
    await run('--prune-profiles');
    const halAfter = await entity(hal._id);
    expect(halAfter.avatar).toBe(`${api.core.config.baseUrl}/media_proxy/accounts/${hal._id}/avatar`);
    expect((await fetch(`${api.server.url}${new URL(before[1].avatar).pathname}`)).status).toBe(404);
    expect((await copied(ida._id)).avatar).toBe(before[2].avatar);
    // ... unless follows are included.
    await run('--prune-profiles', '--include-follows');
    expect((await entity(ida._id)).avatar).toBe(`${api.core.config.baseUrl}/media_proxy/accounts/${ida._id}/avatar`);
    // The proxy fetches a pruned image again on request.
    const proxied = await fetch(`${api.server.url}/media_proxy/accounts/${hal._id}/avatar`, { redirect: 'manual' });
    expect(proxied.status).toBe(302);
    expect((await entity(hal._id)).avatar).toMatch(/\/system\/accounts\/avatars\//);
  });

  it('caches remote custom emojis of statuses, and fetches a changed one on first request', async () => {
    const eve = await createRemoteAccount(api.core, originBase, 'eve9');
    const status = await createRemoteStatus(
      api.core,
      eve,
      {
        id: `${originBase}/users/eve9/statuses/9`,
        type: 'Note',
        attributedTo: eve.uri,
        content: '<p>hello :blob:</p>',
        to: ['https://www.w3.org/ns/activitystreams#Public'],
        tag: [
          {
            type: 'Emoji',
            name: ':blob:',
            icon: { type: 'Image', mediaType: 'image/png', url: `${originBase}/files/blob-1.png` },
          },
        ],
      },
      { requested: true },
    );
    const emojisOf = async () => (await api.call('GET', `/api/v1/statuses/${status!._id}`, viewer.token)).body.emojis;
    const [cached] = await eventually(async () => {
      const e = await emojisOf();
      return e.length === 1 && /\/system\/custom_emojis\/images\/\d+\/original\//.test(e[0].url) && e;
    });
    expect(cached).toMatchObject({ shortcode: 'blob', visible_in_picker: false });
    expect(cached.static_url).toMatch(/\/system\/custom_emojis\/images\/\d+\/static\//);
    expect((await fetch(`${api.server.url}${new URL(cached.url).pathname}`)).status).toBe(200);

    // Its server changes the image (as an actor or status Update names it): until copied, the
    // entity names our proxy, which fetches it.
    const emoji = await collection(api.core.db, customEmojis).findOne({ shortcode: 'blob', domain: eve.domain });
    await upsertRemoteEmojis(api.core, eve.domain, [{ shortcode: 'blob', url: `${originBase}/files/blob-2.png` }]);
    // The old copy is gone, and so is every rendering naming it: the status names our proxy, or
    // already the new copy if the media pipeline was quicker.
    const [changed] = await emojisOf();
    expect(changed.url).not.toBe(cached.url);
    expect([
      `${api.core.config.baseUrl}/media_proxy/emojis/${emoji!._id}`,
      expect.stringContaining('/system/custom_emojis/images/'),
    ]).toContainEqual(changed.url);
    const proxied = await fetch(`${api.server.url}/media_proxy/emojis/${emoji!._id}/static`, { redirect: 'manual' });
    expect(proxied.status).toBe(302);
    expect(hits).toContain('/files/blob-2.png');
    const [fresh] = await emojisOf();
    expect(proxied.headers.get('location')).toBe(fresh.static_url);
    expect((await fetch(`${api.server.url}/media_proxy/emojis/999999999`)).status).toBe(404);
  });
});
