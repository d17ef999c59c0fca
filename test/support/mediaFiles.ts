// Real media made at test time: images with sharp, video/audio/GIF with ffmpeg's lavfi sources.
import sharp from 'sharp';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const run = promisify(execFile);

/** A JPEG with EXIF orientation 6 (shown rotated 90°) and a GPS-like comment to be stripped. */
export async function jpegWithExif(width = 1200, height = 800): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 180, g: 40, b: 40 } } })
    .composite([
      {
        input: await sharp({
          create: {
            width: Math.floor(width / 2),
            height: Math.floor(height / 2),
            channels: 3,
            background: { r: 20, g: 20, b: 200 },
          },
        })
          .png()
          .toBuffer(),
        top: 0,
        left: 0,
      },
    ])
    .withMetadata({ orientation: 6, exif: { IFD0: { Copyright: 'secret-owner', ImageDescription: 'where-i-live' } } })
    .jpeg()
    .toBuffer();
}

export async function png(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { r: 0, g: 128, b: 0, alpha: 0.5 } } })
    .png()
    .toBuffer();
}

async function ffmpegToBuffer(args: string[], ext: string): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'media-test-'));
  try {
    const out = join(dir, `out.${ext}`);
    await run('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args, out], { timeout: 60_000 });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One second of testsrc video with a sine tone (so it stays a "video", not a "gifv"). */
export function shortVideo(): Promise<Buffer> {
  return ffmpegToBuffer(
    [
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=10',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440',
      '-t',
      '1',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
    ],
    'mp4',
  );
}

export function animatedGif(): Promise<Buffer> {
  return ffmpegToBuffer(['-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=5', '-t', '1'], 'gif');
}

export function oggAudio(): Promise<Buffer> {
  return ffmpegToBuffer(['-f', 'lavfi', '-i', 'sine=frequency=330', '-t', '1', '-c:a', 'libvorbis'], 'ogg');
}

export async function animatedWebp(): Promise<Buffer> {
  return sharp(await animatedGif(), { animated: true })
    .webp()
    .toBuffer();
}
