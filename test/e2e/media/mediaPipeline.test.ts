// The asynchronous media path end to end: POST /api/v2/media answers 202 with url null, the
// MediaProcessRequested event goes through Kafka to the media pipeline (a real consumer group),
// which transcodes with ffmpeg; GET /api/v1/media/:id turns from 206 to 200. The processed video is
// then posted with a status and its description edited afterwards.
import type { Core } from '../../../services/core/context.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { runMediaPipeline } from '../../../pipelines/media/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { eventually } from '../../support/core.ts';
import { createTestUser, type TestServer } from '../../support/fixtures.ts';
import type { JsonClient } from '../../support/http.ts';
import { consumerTuning, readTopic } from '../../support/kafka.ts';
import { animatedGif, shortVideo } from '../../support/mediaFiles.ts';
import { eventCodec } from '../../../schemas/codec.ts';

describe('media pipeline over Kafka', () => {
  let api: TestApi;
  let core: Core;
  let server: TestServer;
  let pipeline: Pipeline;
  let call: JsonClient;

  beforeAll(async () => {
    api = await startTestApi({}, { mediaDir: true });
    ({ core, server, call } = api);
    pipeline = await runMediaPipeline(core, consumerTuning);
  });

  afterAll(async () => {
    await pipeline?.stop();
    await api?.close();
  });

  async function uploadV2(token: string, file: Buffer, name: string) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(file)]), name);
    form.append('description', 'A test pattern');
    const res = await fetch(`${server.url}/api/v2/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as { id: string; url: string | null; type: string } };
  }

  it('processes a queued video and a GIF through the pipeline; the video can then be posted and edited', async () => {
    const alice = await createTestUser(core);
    const video = await uploadV2(alice.token, await shortVideo(), 'clip.mp4');
    expect(video.status).toBe(202);
    expect(video.body.url).toBeNull();
    const gif = await uploadV2(alice.token, await animatedGif(), 'loop.gif');
    expect(gif.status).toBe(202);
    expect(gif.body.type).toBe('gifv');

    const done = await eventually(
      async () => {
        const res = await call('GET', `/api/v1/media/${video.body.id}`, alice.token);
        return res.status === 200
          ? res
          : res.status === 206
            ? undefined
            : Promise.reject(new Error(`unexpected ${res.status}`));
      },
      45_000,
      'the video to be processed',
    );
    expect(done.body).toMatchObject({ id: video.body.id, type: 'video', description: 'A test pattern' });
    expect(done.body.url).toMatch(/\.mp4$/);
    expect(done.body.meta).toMatchObject({ width: 320, height: 240, fps: 10 });
    const file = await fetch(done.body.url.replace(core.config.baseUrl, server.url));
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('video/mp4');

    const gifDone = await eventually(
      async () => {
        const res = await call('GET', `/api/v1/media/${gif.body.id}`, alice.token);
        return res.status === 200 ? res : undefined;
      },
      45_000,
      'the gif to be processed',
    );
    expect(gifDone.body).toMatchObject({ type: 'gifv', meta: expect.objectContaining({ width: 64, height: 48 }) });

    // The pipeline announced both results.
    const codec = eventCodec();
    const processed = await readTopic(
      core.config,
      'media',
      (msgs) => msgs.filter((m) => m.headers['event-type'] === 'MediaProcessed').length >= 2,
    );
    const results = processed
      .filter((m) => m.headers['event-type'] === 'MediaProcessed')
      .map((m) => codec.decode(m.value!).record as { mediaId: string; state: string; mediaType: string });
    expect(results).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ mediaId: video.body.id, state: 'complete', mediaType: 'video' }),
        expect.objectContaining({ mediaId: gif.body.id, state: 'complete', mediaType: 'gifv' }),
      ]),
    );

    const posted = await call('POST', '/api/v1/statuses', alice.token, {
      status: 'Look at this',
      media_ids: [video.body.id],
    });
    expect(posted.status).toBe(200);
    expect(posted.body.media_attachments).toEqual([
      expect.objectContaining({ id: video.body.id, type: 'video', url: done.body.url }),
    ]);
    // Attached media can no longer go into another status.
    const reuse = await call('POST', '/api/v1/statuses', alice.token, { status: 'Again', media_ids: [video.body.id] });
    expect(reuse.status).toBe(422);

    // Alt text and focus of the already-posted status's media.
    const edit = await call('PUT', `/api/v1/media/${video.body.id}`, alice.token, {
      description: 'Colour bars and a tone',
      focus: '0.0,0.5',
    });
    expect(edit.status).toBe(200);
    const reread = await call('GET', `/api/v1/statuses/${posted.body.id}`, alice.token);
    expect(reread.body.media_attachments[0]).toMatchObject({
      description: 'Colour bars and a tone',
      meta: expect.objectContaining({ focus: { x: 0, y: 0.5 } }),
    });
  });
});
