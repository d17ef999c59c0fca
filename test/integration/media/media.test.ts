// Media over real HTTP against the real MongoDB-wire server and Redis: uploads (v1 inline, v2
// inline for images and queued for video), processing results, the files served at /system,
// attribute edits, limits and ownership. The Kafka path of the media pipeline is in test/e2e/media.
import sharp from 'sharp';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { processQueuedMedia } from '../../../services/core/media/attachments.ts';
import { removeUnattachedMedia } from '../../../services/core/media/removal.ts';
import { storageFor } from '../../../services/core/media/storage.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { mediaAttachments } from '../../../services/core/model/media.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestServer, type TestUser } from '../../support/fixtures.ts';
import type { JsonClient } from '../../support/http.ts';
import { jpegWithExif, png, shortVideo, animatedGif, animatedWebp, oggAudio } from '../../support/mediaFiles.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON bodies, checked by the assertions
type Json = Record<string, any>;

async function upload(
  server: TestServer,
  token: string,
  version: 'v1' | 'v2',
  file: Buffer,
  fields: Record<string, string> = {},
  name = 'upload.bin',
  thumbnail?: Buffer,
) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(file)], { type: 'application/octet-stream' }), name);
  if (thumbnail) form.append('thumbnail', new Blob([new Uint8Array(thumbnail)]), 'thumb.png');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${server.url}/api/${version}/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}

describe('media attachments API', () => {
  let api: TestApi;
  let core: Core;
  let server: TestServer;
  let call: JsonClient;
  let alice: TestUser;
  let bob: TestUser;
  let published: OutboxEvent[];

  beforeAll(async () => {
    api = await startTestApi({}, { mediaDir: true });
    ({ core, server, call, published } = api);
    alice = await createTestUser(core);
    bob = await createTestUser(core);
  });

  afterAll(() => api?.close());

  it('v1 processes an image inline: rotated, re-encoded without metadata, small version, meta and blurhash', async () => {
    const res = await upload(
      server,
      alice.token,
      'v1',
      await jpegWithExif(1200, 800),
      { description: 'A red square', focus: '0.5,-0.25' },
      'photo.png',
    );
    expect(res.status).toBe(200);
    const m = res.body;
    expect(m).toMatchObject({ type: 'image', description: 'A red square', remote_url: null, text_url: null });
    expect(m.id).toMatch(/^\d+$/);
    // Orientation 6: the stored image is upright, i.e. 800x1200.
    expect(m.meta.original).toEqual({ width: 800, height: 1200, size: '800x1200', aspect: 800 / 1200 });
    expect(m.meta.small.width * m.meta.small.height).toBeLessThanOrEqual(230_400);
    expect(m.meta.focus).toEqual({ x: 0.5, y: -0.25 });
    expect(m.blurhash).toMatch(/^[0-9A-Za-z#$%*+,-.:;=?@[\]^_{|}~]{20,}$/);
    expect(m.url).toMatch(
      new RegExp(`^${core.config.baseUrl}/system/media_attachments/files/${m.id}/original/[0-9a-f]+\\.jpg$`),
    );

    const file = await fetch(m.url.replace(core.config.baseUrl, server.url));
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/jpeg');
    const served = Buffer.from(await file.arrayBuffer());
    const meta = await sharp(served).metadata();
    expect(meta.width).toBe(800);
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    expect(served.includes(Buffer.from('where-i-live'))).toBe(false);

    const preview = await fetch(m.preview_url.replace(core.config.baseUrl, server.url));
    expect(preview.status).toBe(200);
  });

  it('v2 answers 200 for an image processed inline and keeps PNG transparency', async () => {
    const res = await upload(server, alice.token, 'v2', await png(300, 200));
    expect(res.status).toBe(200);
    expect(res.body.url).toMatch(/\.png$/);
    expect(res.body.meta.original.size).toBe('300x200');
    expect(res.headers.get('x-ratelimit-limit')).toBe('30');
    // AVIF (what phones increasingly send) is read and served as JPEG.
    const avif = await sharp({ create: { width: 90, height: 60, channels: 3, background: 'orange' } })
      .avif()
      .toBuffer();
    const fromAvif = await upload(server, alice.token, 'v2', avif, {}, 'photo.avif');
    expect(fromAvif.status).toBe(200);
    expect(fromAvif.body.url).toMatch(/\.jpg$/);
    expect(fromAvif.body.meta.original.size).toBe('90x60');
  });

  it('v2 queues a video (202, url null, 206 on GET) until the media pipeline has processed it', async () => {
    const res = await upload(server, alice.token, 'v2', await shortVideo(), {}, 'clip.gif');
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ type: 'video', url: null });
    const id = res.body.id as string;
    const requested = published.find((e) => e.type === 'MediaProcessRequested' && e.payload.mediaId === id);
    expect(requested?.key).toBe(String(alice.account._id));

    const pending = await call('GET', `/api/v1/media/${id}`, alice.token);
    expect(pending.status).toBe(206);
    expect(pending.body.url).toBeNull();

    // What the media pipeline does for that event (the Kafka path is covered in test/e2e/media).
    await processQueuedMedia(core, BigInt(id));
    expect(
      published.some((e) => e.type === 'MediaProcessed' && e.payload.mediaId === id && e.payload.state === 'complete'),
    ).toBe(true);

    const done = await call('GET', `/api/v1/media/${id}`, alice.token);
    expect(done.status).toBe(200);
    expect(done.body.type).toBe('video');
    expect(done.body.url).toMatch(/\.mp4$/);
    expect(done.body.preview_url).toMatch(/\.jpg$/);
    expect(done.body.meta).toMatchObject({ fps: 10, width: 320, height: 240, audio_encode: 'aac' });
    expect(done.body.meta.duration).toBeGreaterThan(0.9);
    expect(done.body.blurhash).toEqual(expect.any(String));
    const fileUrl = done.body.url.replace(core.config.baseUrl, server.url);
    const file = await fetch(fileUrl);
    expect(file.headers.get('content-type')).toBe('video/mp4');
    expect(file.headers.get('accept-ranges')).toBe('bytes');
    const whole = Buffer.from(await file.arrayBuffer());
    // Byte ranges, as video players ask for them.
    const part = await fetch(fileUrl, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(100, 200))).toBe(true);
    const tail = await fetch(fileUrl, { headers: { range: 'bytes=-10' } });
    expect(Buffer.from(await tail.arrayBuffer()).equals(whole.subarray(whole.length - 10))).toBe(true);
    const beyond = await fetch(fileUrl, { headers: { range: `bytes=${whole.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${whole.length}`);
    // A redelivered event changes nothing.
    const again = await processQueuedMedia(core, BigInt(id));
    expect(again?.files.original).toBe(done.body.url.split('/system/')[1]);
  });

  it('v1 turns an animated GIF into a looping gifv and audio into mp3', async () => {
    const gif = await upload(server, alice.token, 'v1', await animatedGif(), {}, 'anim.gif');
    expect(gif.status).toBe(200);
    expect(gif.body.type).toBe('gifv');
    expect(gif.body.url).toMatch(/\.mp4$/);
    expect(gif.body.meta).toMatchObject({ width: 64, height: 48 });
    const webp = await upload(server, alice.token, 'v1', await animatedWebp(), {}, 'anim.webp');
    expect(webp.status).toBe(200);
    expect(webp.body).toMatchObject({ type: 'gifv', meta: expect.objectContaining({ width: 64, height: 48 }) });
    const audio = await upload(server, alice.token, 'v1', await oggAudio(), {}, 'sound.ogg');
    expect(audio.status).toBe(200);
    expect(audio.body.type).toBe('audio');
    expect(audio.body.url).toMatch(/\.mp3$/);
    expect(audio.body.preview_url).toBeNull();
    expect(audio.body.meta.length).toMatch(/^0:00:01\.\d\d$/);
  });

  it('refuses what is not media, no file, and a pixel count over the limit with clear errors', async () => {
    const text = await upload(server, alice.token, 'v2', Buffer.from('<?php echo "hi"; ?>'), {}, 'innocent.png');
    expect(text.status).toBe(422);
    expect(text.body.error).toBe('Validation failed: File content type is invalid, File is invalid');
    const svg = await upload(
      server,
      alice.token,
      'v2',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>'),
      {},
      'a.svg',
    );
    expect(svg.status).toBe(422);
    const huge = await sharp({ create: { width: 8000, height: 4500, channels: 3, background: 'white' } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    const big = await upload(server, alice.token, 'v2', huge);
    expect(big.status).toBe(422);
    expect(big.body.error).toMatch(/^Validation failed: Image dimensions/);
    const form = new FormData();
    form.append('description', 'no file');
    const missing = await fetch(`${server.url}/api/v2/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}` },
      body: form,
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: string }).error).toBe('param is missing or the value is empty: file');
  });

  it('never lets ffmpeg follow what an upload points at (playlists, concat scripts)', async () => {
    let hits = 0;
    const bait = http.createServer((_req, res) => {
      hits++;
      res.end('x');
    });
    await new Promise<void>((resolve) => bait.listen(0, '127.0.0.1', resolve));
    try {
      const port = (bait.address() as AddressInfo).port;
      const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\nhttp://127.0.0.1:${port}/segment.ts\n#EXT-X-ENDLIST\n`;
      const hls = await upload(server, alice.token, 'v1', Buffer.from(playlist), {}, 'video.mp4');
      expect(hls.status).toBe(422);
      const concat = await upload(
        server,
        alice.token,
        'v1',
        Buffer.from('ffconcat version 1.0\nfile /etc/passwd\n'),
        {},
        'video.mp4',
      );
      expect(concat.status).toBe(422);
      expect(hits).toBe(0);
    } finally {
      await new Promise((resolve) => bait.close(resolve));
    }
  });

  it('edits description and focus; validates both; other users get 404', async () => {
    const res = await upload(server, alice.token, 'v2', await png(64, 64));
    const id = res.body.id as string;
    const put = await call('PUT', `/api/v1/media/${id}`, alice.token, { description: 'New alt text', focus: '-1,1' });
    expect(put.status).toBe(200);
    expect(put.body.description).toBe('New alt text');
    expect(put.body.meta.focus).toEqual({ x: -1, y: 1 });
    expect((await call('PUT', `/api/v1/media/${id}`, alice.token, { focus: '1.5,0' })).status).toBe(422);
    const long = await call('PUT', `/api/v1/media/${id}`, alice.token, { description: 'x'.repeat(1501) });
    expect(long.status).toBe(422);
    expect(long.body.error).toBe('Validation failed: Description is too long (maximum is 1500 characters)');
    expect((await call('GET', `/api/v1/media/${id}`, bob.token)).status).toBe(404);
    expect((await call('PUT', `/api/v1/media/${id}`, bob.token, { description: 'mine now' })).status).toBe(404);
    expect((await call('GET', '/api/v1/media/999999999', alice.token)).status).toBe(404);
    expect((await call('GET', '/api/v1/media/abc', alice.token)).status).toBe(404);
  });

  it('needs a token with write:media', async () => {
    const reader = await createTestUser(core, { scopes: ['read'] });
    const res = await upload(server, reader.token, 'v2', await png(10, 10));
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('This action is outside the authorized scopes');
    const granular = await createTestUser(core, { scopes: ['write:media'] });
    expect((await upload(server, granular.token, 'v2', await png(10, 10))).status).toBe(200);
    const anonymous = await fetch(`${server.url}/api/v2/media`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
  });

  it('serves only safe keys under /system and never raw uploads', async () => {
    for (const path of [
      '/system/../package.json',
      '/system/%2e%2e/%2e%2e/package.json',
      '/system/media_attachments/..%2F..%2Fpackage.json',
      '/system/',
    ]) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(404);
    }
  });

  it('takes a custom thumbnail for audio and video, at upload and later', async () => {
    const audio = await upload(server, alice.token, 'v1', await oggAudio(), {}, 'a.ogg', await png(100, 100));
    expect(audio.status).toBe(200);
    expect(audio.body.preview_url).toMatch(/\/thumbnail\/small\/[0-9a-f]+\.jpg$/);
    expect(audio.body.blurhash).toEqual(expect.any(String));
    expect(audio.body.meta.small).toMatchObject({ width: 100, height: 100 });
    // Queued video: the custom preview is there at once and survives processing.
    const video = await upload(server, alice.token, 'v2', await shortVideo(), {}, 'v.mp4', await png(64, 32));
    expect(video.status).toBe(202);
    const preview = video.body.preview_url as string;
    expect(preview).toMatch(/\/thumbnail\//);
    await processQueuedMedia(core, BigInt(video.body.id));
    const done = await call('GET', `/api/v1/media/${video.body.id}`, alice.token);
    expect(done.body.preview_url).toBe(preview);
    expect(done.body.meta.small).toMatchObject({ width: 64, height: 32 });
    // Replaced later through PUT (multipart).
    const form = new FormData();
    form.append('thumbnail', new Blob([new Uint8Array(await png(50, 50))]), 't.png');
    const put = await fetch(`${server.url}/api/v1/media/${video.body.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${alice.token}` },
      body: form,
    });
    const body = (await put.json()) as Json;
    expect(put.status).toBe(200);
    expect(body.preview_url).not.toBe(preview);
    expect(body.meta.small).toMatchObject({ width: 50, height: 50 });
    const bad = await upload(server, alice.token, 'v1', await oggAudio(), {}, 'a.ogg', Buffer.from('not an image'));
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe('Validation failed: Thumbnail content type is invalid, Thumbnail is invalid');
  });

  it('refuses to post media that is still processing; reports failed processing as 422', async () => {
    const queued = await upload(server, alice.token, 'v2', await shortVideo(), {}, 'v.mp4');
    const post = await call('POST', '/api/v1/statuses', alice.token, {
      status: 'too early',
      media_ids: [queued.body.id],
    });
    expect(post.status).toBe(422);
    expect(post.body.error).toBe('Cannot attach files that have not finished processing. Try again in a moment!');
    // The upload vanished before the pipeline got to it: the attachment fails, visibly.
    const doc = await collection(core.db, mediaAttachments).findOne({ _id: BigInt(queued.body.id) });
    // The raw upload is stored but never served.
    expect(await storageFor(core).get(doc!.files.upload!)).not.toBeNull();
    expect((await fetch(`${server.url}/system/${doc!.files.upload}`)).status).toBe(404);
    await storageFor(core).delete(doc!.files.upload!);
    await processQueuedMedia(core, doc!._id);
    const failed = await call('GET', `/api/v1/media/${queued.body.id}`, alice.token);
    expect(failed.status).toBe(422);
    expect(failed.body.error).toBe('Validation failed: File is missing');
    expect(
      published.some(
        (e) => e.type === 'MediaProcessed' && e.payload.mediaId === queued.body.id && e.payload.state === 'failed',
      ),
    ).toBe(true);
  });

  it('deletes unattached media with its files, refuses attached media, and cleans up old uploads', async () => {
    const res = await upload(server, alice.token, 'v2', await png(16, 16));
    const fileUrl = (res.body.url as string).replace(core.config.baseUrl, server.url);
    expect((await fetch(fileUrl)).status).toBe(200);
    expect((await call('DELETE', `/api/v1/media/${res.body.id}`, bob.token)).status).toBe(404);
    const del = await call('DELETE', `/api/v1/media/${res.body.id}`, alice.token);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({});
    expect((await fetch(fileUrl)).status).toBe(404);
    expect((await call('GET', `/api/v1/media/${res.body.id}`, alice.token)).status).toBe(404);

    const attached = await upload(server, alice.token, 'v2', await png(16, 16));
    const status = await call('POST', '/api/v1/statuses', alice.token, {
      status: 'with a picture',
      media_ids: [attached.body.id],
    });
    expect(status.status).toBe(200);
    const refused = await call('DELETE', `/api/v1/media/${attached.body.id}`, alice.token);
    expect(refused.status).toBe(422);
    // PUT still works on media of a posted status.
    expect(
      (await call('PUT', `/api/v1/media/${attached.body.id}`, alice.token, { description: 'late alt text' })).body
        .description,
    ).toBe('late alt text');
    // Delete and redraft: the media of the deleted status go into the new one.
    expect((await call('DELETE', `/api/v1/statuses/${status.body.id}`, alice.token)).status).toBe(200);
    const redraft = await call('POST', '/api/v1/statuses', alice.token, {
      status: 'with a picture, again',
      media_ids: [attached.body.id],
    });
    expect(redraft.status).toBe(200);
    expect(redraft.body.media_attachments.map((m: Json) => m.id)).toEqual([attached.body.id]);
    expect((await collection(core.db, mediaAttachments).findOne({ _id: BigInt(attached.body.id) }))?.statusId).toBe(
      BigInt(redraft.body.id),
    );
    // A live status's media still cannot be taken.
    expect(
      (await call('POST', '/api/v1/statuses', alice.token, { status: 'steal', media_ids: [attached.body.id] })).status,
    ).toBe(422);

    const stale = await upload(server, alice.token, 'v2', await png(16, 16));
    await collection(core.db, mediaAttachments).updateOne(
      { _id: BigInt(stale.body.id) },
      { $set: { createdAt: new Date(Date.now() - 25 * 3600_000) } },
    );
    expect(await removeUnattachedMedia(core)).toBeGreaterThanOrEqual(1);
    expect(await collection(core.db, mediaAttachments).countDocuments({ _id: BigInt(stale.body.id) })).toBe(0);
    expect((await fetch((stale.body.url as string).replace(core.config.baseUrl, server.url))).status).toBe(404);
    expect(await collection(core.db, mediaAttachments).countDocuments({ _id: BigInt(attached.body.id) })).toBe(1);
  });

  it('deletes a status with delete_media=true: its media and files go at once, no redraft', async () => {
    const kept = await upload(server, alice.token, 'v2', await png(16, 16));
    const gone = await upload(server, alice.token, 'v2', await png(16, 16));
    const keptStatus = await call('POST', '/api/v1/statuses', alice.token, {
      status: 'kept',
      media_ids: [kept.body.id],
    });
    const goneStatus = await call('POST', '/api/v1/statuses', alice.token, {
      status: 'gone',
      media_ids: [gone.body.id],
    });
    const fileUrl = (gone.body.url as string).replace(core.config.baseUrl, server.url);
    expect((await fetch(fileUrl)).status).toBe(200);

    const del = await call('DELETE', `/api/v1/statuses/${goneStatus.body.id}?delete_media=true`, alice.token);
    expect(del.status).toBe(200);
    expect(del.body.text).toBe('gone');
    expect(await collection(core.db, mediaAttachments).countDocuments({ _id: BigInt(gone.body.id) })).toBe(0);
    expect((await fetch(fileUrl)).status).toBe(404);
    const redraft = await call('POST', '/api/v1/statuses', alice.token, { status: 'again', media_ids: [gone.body.id] });
    expect(redraft.status).toBe(422);

    // Without it (or with false) the media stay for a redraft.
    expect(
      (await call('DELETE', `/api/v1/statuses/${keptStatus.body.id}?delete_media=false`, alice.token)).status,
    ).toBe(200);
    expect(await collection(core.db, mediaAttachments).countDocuments({ _id: BigInt(kept.body.id) })).toBe(1);
  });

  it('rate-limits uploads to 30 per 30 minutes per user', async () => {
    const carol = await createTestUser(core);
    const tiny = await png(4, 4);
    const key = `ratelimit:media:${carol.account._id}:${Math.floor(Date.now() / 1_800_000) * 1_800_000}`;
    await core.redis.set(key, '30', 'EX', 60);
    const res = await upload(server, carol.token, 'v2', tiny);
    expect(res.status).toBe(429);
    expect(res.body.error).toBe('Too many requests');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
  });
});
