// Turns an upload into web-friendly files, Mastodon-style:
//   image  → original re-encoded (auto-rotated, metadata stripped, at most 3840x2160 pixels' worth),
//            small preview (at most 640x360 pixels' worth), sizes/aspect in meta, blurhash;
//   GIF    → animated: gifv (silent H.264 mp4) + thumbnail; static: png image (animated WebP too);
//   video  → H.264/AAC mp4 + thumbnail (a video without sound becomes gifv, like Mastodon);
//   audio  → mp3.
// The real type comes from the bytes (sharp and ffprobe read them), never from the file name.
import sharp from 'sharp';
import type { Metadata as SharpMetadata, Sharp, OutputInfo } from 'sharp';
import { encode as encodeBlurhash } from 'blurhash';
import { writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Id } from '../ids.ts';
import type { MediaMeta, MediaType, ImageDimensions } from '../model/media.ts';
import { LIMITS } from '../instance/limits.ts';
import { randomFileName, type MediaStorage } from './storage.ts';
import { MediaRejectedError } from './errors.ts';
import { probe, MediaToolError, type ProbeResult } from './ffmpeg.ts';
import { withTempDir, videoLimits, processVideo, processAudio } from './transcode.ts';

export const L = LIMITS.mediaAttachments;
/** Mastodon's style geometry: original ≤ 3840x2160 pixels' worth, small ≤ 640x360. */
const ORIGINAL_PIXELS = 8_294_400;
const SMALL_PIXELS = 230_400;

export type SniffedKind = 'image' | 'animated-gif' | 'video' | 'audio';

export interface Sniffed {
  kind: SniffedKind;
  /** sharp's format (jpeg, png, gif, webp, heif) or ffprobe's format name. */
  format: string;
}

export interface ProcessedMedia {
  type: MediaType;
  original: string;
  small: string | null;
  contentType: string;
  fileSize: number;
  meta: MediaMeta;
  blurhash: string | null;
}

const IMAGE_FORMATS = new Set(['jpeg', 'png', 'gif', 'webp', 'heif']);
/** ffprobe format names we accept as video/audio containers. */
const AV_FORMATS = /^(mov,mp4,m4a,3gp,3g2,mj2|matroska,webm|ogg|mp3|wav|flac|aac|asf)$/;

async function imageMetadata(data: Buffer): Promise<SharpMetadata | null> {
  try {
    // Header parsing only; pixel limits are checked below on the numbers it reports.
    return await sharp(data, { limitInputPixels: false, animated: true }).metadata();
  } catch {
    return null;
  }
}

/** Finds out what an upload really is; throws MediaRejectedError for anything else. */
export async function sniffMedia(
  data: Buffer,
  probeFile: () => Promise<ProbeResult | null>,
): Promise<Sniffed & { probe?: ProbeResult; image?: SharpMetadata }> {
  if (data.length === 0) throw new MediaRejectedError('File is invalid');
  const image = await imageMetadata(data);
  if (image?.format && IMAGE_FORMATS.has(image.format)) {
    const animated = (image.format === 'gif' || image.format === 'webp') && (image.pages ?? 1) > 1;
    return { kind: animated ? 'animated-gif' : 'image', format: image.format, image };
  }
  const probed = await probeFile();
  const formatName = probed?.format.format_name ?? '';
  if (probed && AV_FORMATS.test(formatName)) {
    const video = probed.streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
    const audio = probed.streams.find((s) => s.codec_type === 'audio');
    if (video) return { kind: 'video', format: formatName, probe: probed };
    if (audio) return { kind: 'audio', format: formatName, probe: probed };
  }
  throw new MediaRejectedError('File content type is invalid, File is invalid');
}

export function dims(
  width: number,
  height: number,
  size: number | null = null,
): ImageDimensions & { fileSize?: number } {
  const d: ImageDimensions = { width, height, size: `${width}x${height}`, aspect: height ? width / height : 1 };
  return size === null ? d : { ...d };
}

/** Scale factor so that width*height fits in `pixels` (never enlarges). */
function fitPixels(width: number, height: number, pixels: number): { width: number; height: number } {
  if (width * height <= pixels) return { width, height };
  const scale = Math.sqrt(pixels / (width * height));
  return { width: Math.max(1, Math.floor(width * scale)), height: Math.max(1, Math.floor(height * scale)) };
}

async function blurhashOf(image: Sharp): Promise<string> {
  const { data, info } = await image
    .clone()
    .resize(32, 32, { fit: 'inside' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return encodeBlurhash(new Uint8ClampedArray(data), info.width, info.height, 4, 4);
}

/** Writes the small preview of a decoded picture (image or video frame); returns key, dims, blurhash. */
export async function smallVersion(storage: MediaStorage, prefix: string, input: Buffer) {
  const base = sharp(input, { limitInputPixels: ORIGINAL_PIXELS * 4 }).rotate();
  const meta = await base.metadata();
  const w0 = meta.autoOrient?.width ?? meta.width ?? 1;
  const h0 = meta.autoOrient?.height ?? meta.height ?? 1;
  const target = fitPixels(w0, h0, SMALL_PIXELS);
  const small = base.clone().resize(target.width, target.height, { fit: 'fill' }).flatten({ background: '#ffffff' });
  const { data, info } = await small.clone().jpeg({ quality: 85, mozjpeg: true }).toBuffer({ resolveWithObject: true });
  const key = `${prefix}/small/${randomFileName('jpg')}`;
  await storage.put(key, data, 'image/jpeg');
  return { key, dims: dims(info.width, info.height), blurhash: await blurhashOf(small) };
}

function checkImageLimits(size: number, width: number, height: number): void {
  if (size > L.imageSizeLimit)
    throw new MediaRejectedError(`File size must be less than ${L.imageSizeLimit / 1024 / 1024} MB`);
  if (width * height > L.imageMatrixLimit)
    throw new MediaRejectedError(`Image dimensions must be at most ${L.imageMatrixLimit} pixels`);
}

async function processImage(
  storage: MediaStorage,
  prefix: string,
  data: Buffer,
  meta: SharpMetadata,
): Promise<ProcessedMedia> {
  const width = meta.autoOrient?.width ?? meta.width ?? 0;
  const height = meta.autoOrient?.height ?? meta.height ?? 0;
  checkImageLimits(data.length, width, height);
  let pipeline: Sharp;
  try {
    pipeline = sharp(data, { limitInputPixels: L.imageMatrixLimit, failOn: 'error' }).rotate();
  } catch {
    throw new MediaRejectedError('File is invalid');
  }
  const target = fitPixels(width, height, ORIGINAL_PIXELS);
  if (target.width !== width) pipeline = pipeline.resize(target.width, target.height, { fit: 'fill' });
  // Keep PNG/WebP (transparency), everything else becomes JPEG. sharp drops EXIF/GPS unless asked.
  const keep = meta.format === 'png' || meta.format === 'gif' ? 'png' : meta.format === 'webp' ? 'webp' : 'jpeg';
  const encoded =
    keep === 'png'
      ? pipeline.png()
      : keep === 'webp'
        ? pipeline.webp({ quality: 90 })
        : pipeline.jpeg({ quality: 90, mozjpeg: true });
  let out: { data: Buffer; info: OutputInfo };
  try {
    out = await encoded.toBuffer({ resolveWithObject: true });
  } catch {
    throw new MediaRejectedError('File is invalid');
  }
  const ext = keep === 'jpeg' ? 'jpg' : keep;
  const contentType = keep === 'jpeg' ? 'image/jpeg' : `image/${keep}`;
  const original = `${prefix}/original/${randomFileName(ext)}`;
  await storage.put(original, out.data, contentType);
  const small = await smallVersion(storage, prefix, out.data);
  return {
    type: 'image',
    original,
    small: small.key,
    contentType,
    fileSize: out.data.length,
    meta: { original: dims(out.info.width, out.info.height), small: small.dims },
    blurhash: small.blurhash,
  };
}

/** Storage prefix of an attachment's files. */
export function mediaKeyPrefix(id: Id): string {
  return `media_attachments/files/${id}`;
}

/** Cheap checks that need no transcoding: the type and the limits (for the 422 at upload time). */
export async function inspectUpload(data: Buffer): Promise<Sniffed & { probe?: ProbeResult; image?: SharpMetadata }> {
  return withTempDir(async (dir) => {
    const input = join(dir, 'upload');
    const sniffed = await sniffMedia(data, async () => {
      await writeFile(input, data);
      return probe(input);
    });
    if (sniffed.kind === 'image' && sniffed.image) {
      const w = sniffed.image.autoOrient?.width ?? sniffed.image.width ?? 0;
      const h = sniffed.image.autoOrient?.height ?? sniffed.image.height ?? 0;
      checkImageLimits(data.length, w, h);
    } else if (sniffed.kind === 'animated-gif' && sniffed.image) {
      checkImageLimits(data.length, sniffed.image.width ?? 0, sniffed.image.pageHeight ?? sniffed.image.height ?? 0);
    } else if (sniffed.probe) {
      videoLimits(data.length, sniffed.probe);
    }
    return sniffed;
  });
}

/** Processes an upload into stored files. Throws MediaRejectedError for unacceptable input. */
export async function processMedia(storage: MediaStorage, id: Id, data: Buffer): Promise<ProcessedMedia> {
  try {
    return await transcode(storage, id, data);
  } catch (err) {
    // ffmpeg refusing a file that probed fine is a property of the file: the uploader gets a 422.
    if (err instanceof MediaToolError) throw new MediaRejectedError('File could not be processed');
    throw err;
  }
}

async function transcode(storage: MediaStorage, id: Id, data: Buffer): Promise<ProcessedMedia> {
  const prefix = mediaKeyPrefix(id);
  return withTempDir(async (dir) => {
    const input = join(dir, 'upload');
    await writeFile(input, data);
    const sniffed = await sniffMedia(data, () => probe(input));
    switch (sniffed.kind) {
      case 'image':
        return processImage(storage, prefix, data, sniffed.image as SharpMetadata);
      case 'animated-gif': {
        const m = sniffed.image as SharpMetadata;
        checkImageLimits(data.length, m.width ?? 0, m.pageHeight ?? m.height ?? 0);
        // Debian's ffmpeg 5 cannot decode animated WebP: sharp turns it into a GIF first.
        if (m.format === 'webp')
          await writeFile(
            input,
            await sharp(data, { animated: true, limitInputPixels: L.imageMatrixLimit }).gif().toBuffer(),
          );
        const probed = await probe(input);
        if (!probed) throw new MediaRejectedError('File is invalid');
        return processVideo(storage, prefix, input, dir, probed, true);
      }
      case 'video': {
        videoLimits((await stat(input)).size, sniffed.probe as ProbeResult);
        return processVideo(storage, prefix, input, dir, sniffed.probe as ProbeResult, false);
      }
      case 'audio':
        return processAudio(storage, prefix, input, dir, data.length, sniffed.probe as ProbeResult);
    }
  });
}

export interface ProcessedThumbnail {
  key: string;
  dims: ImageDimensions;
  blurhash: string;
}

/** A custom preview image for audio/video (`thumbnail` parameter): stored like a small version. */
export async function processThumbnail(storage: MediaStorage, id: Id, data: Buffer): Promise<ProcessedThumbnail> {
  const meta = await imageMetadata(data);
  if (!meta?.format || !IMAGE_FORMATS.has(meta.format))
    throw new MediaRejectedError('Thumbnail content type is invalid, Thumbnail is invalid');
  checkImageLimits(data.length, meta.width ?? 0, meta.height ?? 0);
  try {
    return await smallVersion(storage, `${mediaKeyPrefix(id)}/thumbnail`, data);
  } catch {
    throw new MediaRejectedError('Thumbnail is invalid');
  }
}

/** Whether an upload of this kind is processed inline by POST /api/v2/media (Mastodon: small images). */
export function processedInline(kind: SniffedKind): boolean {
  return kind === 'image';
}
