// Media, polls and scheduled statuses as the masto client library sees them, in its own Node
// process (masto is ESM-only). Prints one JSON line with what it observed; masto.test.ts checks it.
// Usage: node mastoFlow.ts <baseUrl> <aliceToken> <bobToken> <mp4Path>
import { readFile } from 'node:fs/promises';
import { createRestAPIClient } from 'masto';

const [url, aliceToken, bobToken, mp4Path] = process.argv.slice(2);
const a = createRestAPIClient({ url, accessToken: aliceToken, mediaTimeout: 45_000 });
const b = createRestAPIClient({ url, accessToken: bobToken });
const anonymous = createRestAPIClient({ url });

// v2 upload: masto polls GET /api/v1/media/:id until the media pipeline has processed the video.
const video = await a.v2.media.create({
  file: new Blob([new Uint8Array(await readFile(mp4Path))], { type: 'video/mp4' }),
  description: 'a clip',
});
const focused = await a.v1.media.$select(video.id).update({ focus: '0.25,-0.5' });

// A scheduled status with the video, moved once, then published by the scheduler.
const soon = (ms: number) => new Date(Date.now() + ms).toISOString();
const scheduled = await a.v1.statuses.create({
  status: 'Later, via masto',
  mediaIds: [video.id],
  scheduledAt: soon(3_000),
});
const cancelled = await a.v1.statuses.create({ status: 'Never mind', scheduledAt: soon(3_600_000) });
const listed = await a.v1.scheduledStatuses.list();
const moved = await a.v1.scheduledStatuses.$select(scheduled.id).update({ scheduledAt: soon(2_500) });
await a.v1.scheduledStatuses.$select(cancelled.id).remove();
let remaining = await a.v1.scheduledStatuses.list();
const deadline = Date.now() + 30_000;
while (remaining.length > 0 && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 200));
  remaining = await a.v1.scheduledStatuses.list();
}

// A private poll: the follower-less stranger and the logged-out client cannot read it.
const privatePoll = await a.v1.statuses.create({
  status: 'Secret vote',
  visibility: 'private',
  poll: { options: ['x', 'y'], expiresIn: 600, multiple: true },
});
const status = async (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: { statusCode?: number }) => e.statusCode ?? 0,
  );
const pollId = privatePoll.poll?.id ?? '';
const ownRead = await a.v1.polls.$select(pollId).fetch();

process.stdout.write(
  JSON.stringify({
    video: {
      id: video.id,
      type: video.type,
      url: video.url,
      fps: (video.meta as { fps?: number } | null)?.fps,
      focus: focused.meta?.focus,
    },
    scheduled: {
      id: scheduled.id,
      text: scheduled.params.text,
      mediaIds: scheduled.params.mediaIds,
      media: scheduled.mediaAttachments.map((m) => m.id),
    },
    listedIds: listed.map((s) => s.id),
    movedAt: moved.scheduledAt,
    remaining: remaining.length,
    poll: {
      ownRead: { voted: ownRead.voted, multiple: ownRead.multiple, votersCount: ownRead.votersCount },
      anonymous: await status(anonymous.v1.polls.$select(pollId).fetch()),
      stranger: await status(b.v1.polls.$select(pollId).fetch()),
    },
  }) + '\n',
);
