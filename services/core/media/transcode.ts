// Video and audio: probed and transcoded with ffmpeg (Mastodon's limits and output: H.264/AAC MP4,
// MP3), with a still frame and its small version for videos.
import { mkdtemp, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MediaMeta } from '../model/media.ts';
import { randomFileName, type MediaStorage } from './storage.ts';
import { MediaRejectedError } from './errors.ts';
import { ffmpeg, probe, parseFrameRate, formatLength, safeInput, type ProbeResult } from './ffmpeg.ts';
import { L, type ProcessedMedia, dims, smallVersion } from './process.ts';

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'fedisrv-media-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
export function videoLimits(size: number, probed: ProbeResult): void {
  if (size > L.videoSizeLimit)
    throw new MediaRejectedError(`File size must be less than ${L.videoSizeLimit / 1024 / 1024} MB`);
  const v = probed.streams.find((s) => s.codec_type === 'video');
  if (!v) return;
  if ((v.width ?? 0) * (v.height ?? 0) > L.videoMatrixLimit)
    throw new MediaRejectedError(`Video dimensions must be at most ${L.videoMatrixLimit} pixels`);
  const fps = parseFrameRate(v.avg_frame_rate) ?? parseFrameRate(v.r_frame_rate) ?? 0;
  if (fps > L.videoFrameRateLimit)
    throw new MediaRejectedError(`Video frame rate must be at most ${L.videoFrameRateLimit} fps`);
}
export async function processVideo(
  storage: MediaStorage,
  prefix: string,
  input: string,
  dir: string,
  probed: ProbeResult,
  gif: boolean,
): Promise<ProcessedMedia> {
  const hasAudio = !gif && probed.streams.some((s) => s.codec_type === 'audio');
  const out = join(dir, 'out.mp4');
  await ffmpeg([
    ...safeInput(input, probed.format.format_name),
    '-map_metadata',
    '-1',
    '-map',
    '0:v:0',
    ...(hasAudio ? ['-map', '0:a:0'] : []),
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '23',
    '-maxrate',
    '1300K',
    '-bufsize',
    '1300K',
    '-pix_fmt',
    'yuv420p',
    '-vf',
    'scale=trunc(iw/2)*2:trunc(ih/2)*2',
    ...(hasAudio ? ['-c:a', 'aac', '-b:a', '192k'] : ['-an']),
    '-movflags',
    '+faststart',
    out,
  ]);
  const thumbPath = join(dir, 'thumb.png');
  await ffmpeg(['-i', out, '-frames:v', '1', '-f', 'image2', thumbPath], 60_000);
  const after = await probe(out);
  if (!after) throw new MediaRejectedError('File could not be processed');
  const v = after.streams.find((s) => s.codec_type === 'video');
  const a = after.streams.find((s) => s.codec_type === 'audio');
  const width = v?.width ?? 0;
  const height = v?.height ?? 0;
  const duration = Number(after.format.duration ?? v?.duration ?? 0) || 0;
  const frameRate = v?.r_frame_rate ?? v?.avg_frame_rate ?? '0/1';
  const bitrate = Number(after.format.bit_rate ?? 0) || 0;
  const data = await readFile(out);
  const original = `${prefix}/original/${randomFileName('mp4')}`;
  await storage.put(original, data, 'video/mp4');
  const small = await smallVersion(storage, prefix, await readFile(thumbPath));
  const meta: MediaMeta = {
    length: formatLength(duration),
    duration,
    fps: Math.round(parseFrameRate(frameRate) ?? 0),
    original: { ...dims(width, height), frameRate, duration, bitrate },
    small: small.dims,
  };
  if (a) {
    meta.audioEncode = a.codec_name;
    meta.audioBitrate = a.sample_rate ? `${a.sample_rate} Hz` : undefined;
    meta.audioChannels = a.channel_layout ?? (a.channels === 1 ? 'mono' : a.channels === 2 ? 'stereo' : undefined);
  }
  return {
    // Mastodon: GIFs and videos without sound are looping "gifv".
    type: gif || !hasAudio ? 'gifv' : 'video',
    original,
    small: small.key,
    contentType: 'video/mp4',
    fileSize: data.length,
    meta,
    blurhash: small.blurhash,
  };
}
export async function processAudio(
  storage: MediaStorage,
  prefix: string,
  input: string,
  dir: string,
  size: number,
  probed: ProbeResult,
): Promise<ProcessedMedia> {
  if (size > L.videoSizeLimit)
    throw new MediaRejectedError(`File size must be less than ${L.videoSizeLimit / 1024 / 1024} MB`);
  const out = join(dir, 'out.mp3');
  await ffmpeg([
    ...safeInput(input, probed.format.format_name),
    '-map_metadata',
    '-1',
    '-vn',
    '-c:a',
    'libmp3lame',
    '-b:a',
    '192k',
    out,
  ]);
  const after = await probe(out);
  const a = after?.streams.find((s) => s.codec_type === 'audio');
  const duration = Number(after?.format.duration ?? 0) || 0;
  const bitrate = Number(after?.format.bit_rate ?? 0) || 0;
  const data = await readFile(out);
  const original = `${prefix}/original/${randomFileName('mp3')}`;
  await storage.put(original, data, 'audio/mpeg');
  return {
    type: 'audio',
    original,
    small: null,
    contentType: 'audio/mpeg',
    fileSize: data.length,
    meta: {
      length: formatLength(duration),
      duration,
      audioEncode: a?.codec_name,
      audioBitrate: a?.sample_rate ? `${a.sample_rate} Hz` : undefined,
      audioChannels: a?.channel_layout ?? (a?.channels === 1 ? 'mono' : 'stereo'),
      original: { ...dims(0, 0), duration, bitrate },
    },
    blurhash: null,
  };
}
