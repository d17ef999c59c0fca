// Debian's ffmpeg/ffprobe through execFile (no shell): probing and transcoding of video, GIF and
// audio. Every call has a timeout and reads stdin from nowhere (-nostdin). Uploads are hostile:
// inputs may only be read through the `file` protocol (a playlist naming http:// or other URLs
// cannot make us fetch anything), and transcoding pins the demuxer the probe accepted, so a file
// is never re-detected as a playlist or concat script that pulls in other local files.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ProbeStream {
  codec_type: 'video' | 'audio' | string;
  codec_name?: string;
  width?: number;
  height?: number;
  r_frame_rate?: string;
  avg_frame_rate?: string;
  duration?: string;
  bit_rate?: string;
  sample_rate?: string;
  channels?: number;
  channel_layout?: string;
  disposition?: { attached_pic?: number };
}

export interface ProbeResult {
  streams: ProbeStream[];
  format: { format_name?: string; duration?: string; bit_rate?: string; size?: string };
}

export class MediaToolError extends Error {}

/** ffprobe of a file; null when ffprobe cannot read it as media at all. */
export async function probe(path: string): Promise<ProbeResult | null> {
  try {
    const { stdout } = await run(
      'ffprobe',
      ['-v', 'error', '-protocol_whitelist', 'file', '-show_streams', '-show_format', '-of', 'json', path],
      {
        timeout: 30_000,
        maxBuffer: 4 * 1024 * 1024,
      },
    );
    const parsed = JSON.parse(stdout) as Partial<ProbeResult>;
    if (!parsed.format || !parsed.streams) return null;
    return { streams: parsed.streams, format: parsed.format };
  } catch {
    return null;
  }
}

export async function ffmpeg(args: string[], timeoutMs = 10 * 60_000): Promise<void> {
  try {
    await run('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args], {
      timeout: timeoutMs,
      maxBuffer: 4 * 1024 * 1024,
    });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new MediaToolError(
      `ffmpeg failed: ${stderr.trim().split('\n').slice(-3).join(' ') || (err as Error).message}`,
    );
  }
}

/** ffmpeg input options for a probed upload: file protocol only, demuxer pinned. */
export function safeInput(path: string, formatName: string | undefined): string[] {
  const demuxer = (formatName ?? '').split(',')[0];
  return ['-protocol_whitelist', 'file', ...(/^[a-z0-9_]+$/.test(demuxer) ? ['-f', demuxer] : []), '-i', path];
}

/** "30000/1001" → 29.97; null for "0/0" or garbage. */
export function parseFrameRate(rate: string | undefined): number | null {
  if (!rate) return null;
  const m = /^(\d+)(?:\/(\d+))?$/.exec(rate);
  if (!m) return null;
  const num = Number(m[1]);
  const den = m[2] === undefined ? 1 : Number(m[2]);
  if (!den || !num) return null;
  return num / den;
}

/** 88.65 → "0:01:28.65" like Mastodon's meta.length. */
export function formatLength(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds - h * 3600 - m * 60;
  const secs = s.toFixed(2).padStart(5, '0');
  return `${h}:${String(m).padStart(2, '0')}:${secs}`;
}
