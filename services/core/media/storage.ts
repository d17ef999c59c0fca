// Where uploaded files live. One interface, two drivers:
//   - local disk under config.mediaDir (default), served by the API at /system/<key>;
//   - any S3-compatible object store (Mastodon's S3_* variables), served from the bucket or
//     S3_ALIAS_HOST.
// Keys are relative paths we generate ourselves ("media_attachments/files/12/original/ab12.png");
// both drivers still refuse anything that could escape their root.
import { mkdir, readFile, rm, stat, writeFile, rename } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { dirname, extname, resolve, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';

export interface StoredObject {
  body: Readable;
  contentType: string;
  /** Bytes in `body`. */
  size: number;
  /** Size of the whole object (differs from `size` for a byte range). */
  totalSize: number;
}

/** Inclusive byte range, as in an HTTP Range header. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface MediaStorage {
  readonly driver: 'local' | 's3';
  put(key: string, data: Buffer, contentType: string): Promise<void>;
  /** The whole object, or null when it does not exist. */
  get(key: string): Promise<Buffer | null>;
  /** A stream of the object (or of a byte range of it), or null when it does not exist. */
  stream(key: string, range?: ByteRange): Promise<StoredObject | null>;
  /** Public URL of the object. */
  url(key: string): string;
  delete(key: string): Promise<void>;
}

const KEY = /^[a-z0-9_-]+(\/[a-z0-9_-]+)*(\.[a-z0-9]{1,5})?$/i;

export function assertSafeKey(key: string): void {
  if (!KEY.test(key) || key.length > 512) throw new Error(`unsafe storage key: ${JSON.stringify(key)}`);
}

export function isSafeKey(key: string): boolean {
  return KEY.test(key) && key.length <= 512;
}

const CONTENT_TYPES: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.oga': 'audio/ogg',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
  '.flac': 'audio/flac',
};

/** Content type of a stored file, from the extension we gave it. */
export function contentTypeForKey(key: string): string {
  return CONTENT_TYPES[extname(key).toLowerCase()] ?? 'application/octet-stream';
}

/** A random file name like Mastodon's (hex), with an extension. */
export function randomFileName(extension: string): string {
  return `${randomBytes(8).toString('hex')}.${extension.replace(/^\./, '')}`;
}

export class LocalStorage implements MediaStorage {
  readonly driver = 'local' as const;
  readonly root: string;
  private readonly baseUrl: string;

  constructor(root: string, baseUrl: string) {
    this.root = resolve(root);
    this.baseUrl = baseUrl.replace(/\/$/, '');
  }

  /** Absolute path of a key, guaranteed to lie inside the root. */
  path(key: string): string {
    assertSafeKey(key);
    const full = resolve(this.root, key);
    if (!full.startsWith(this.root + sep)) throw new Error(`storage key escapes the root: ${key}`);
    return full;
  }

  async put(key: string, data: Buffer, _contentType?: string): Promise<void> {
    const full = this.path(key);
    await mkdir(dirname(full), { recursive: true });
    // Write then rename: readers never see half a file.
    const tmp = `${full}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, data);
    await rename(tmp, full);
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async stream(key: string, range?: ByteRange): Promise<StoredObject | null> {
    const full = this.path(key);
    try {
      const s = await stat(full);
      if (!s.isFile()) return null;
      if (range) {
        const end = Math.min(range.end, s.size - 1);
        return {
          body: createReadStream(full, { start: range.start, end }),
          contentType: contentTypeForKey(key),
          size: end - range.start + 1,
          totalSize: s.size,
        };
      }
      return { body: createReadStream(full), contentType: contentTypeForKey(key), size: s.size, totalSize: s.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  url(key: string): string {
    assertSafeKey(key);
    return `${this.baseUrl}/system/${key}`;
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}

import type { S3Settings } from '../s3Settings.ts';
export type { S3Settings };
export { s3SettingsFromEnv } from '../s3Settings.ts';

/** Public URL of an object in a bucket (alias host first, like Mastodon). */
export function s3PublicUrl(s: S3Settings, key: string): string {
  if (s.aliasHost) return `${s.protocol}://${s.aliasHost.replace(/\/$/, '')}/${key}`;
  if (s.endpoint) return `${s.endpoint.replace(/\/$/, '')}/${s.bucket}/${key}`;
  return `https://${s.bucket}.s3.${s.region}.amazonaws.com/${key}`;
}

// Minimal shape of the AWS SDK client we use, so the SDK loads only when S3 is configured.
interface S3Like {
  send(command: unknown): Promise<unknown>;
}
type S3Module = typeof import('@aws-sdk/client-s3');

export class S3Storage implements MediaStorage {
  readonly driver = 's3' as const;
  readonly settings: S3Settings;
  private client: Promise<{ s3: S3Like; sdk: S3Module }> | null = null;

  constructor(settings: S3Settings) {
    this.settings = settings;
  }

  private connect(): Promise<{ s3: S3Like; sdk: S3Module }> {
    this.client ??= import('@aws-sdk/client-s3').then((sdk) => {
      const s = this.settings;
      const s3 = new sdk.S3Client({
        region: s.region,
        endpoint: s.endpoint ?? undefined,
        forcePathStyle: s.forcePathStyle,
        credentials:
          s.accessKeyId && s.secretAccessKey
            ? { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey }
            : undefined,
      });
      return { s3, sdk };
    });
    return this.client;
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    assertSafeKey(key);
    const { s3, sdk } = await this.connect();
    await s3.send(
      new sdk.PutObjectCommand({
        Bucket: this.settings.bucket,
        Key: key,
        Body: data,
        ContentType: contentType,
        CacheControl: 'public, max-age=315576000, immutable',
        ACL: (this.settings.permission ?? undefined) as 'public-read' | undefined,
      }),
    );
  }

  async stream(key: string, range?: ByteRange): Promise<StoredObject | null> {
    assertSafeKey(key);
    const { s3, sdk } = await this.connect();
    try {
      const out = (await s3.send(
        new sdk.GetObjectCommand({
          Bucket: this.settings.bucket,
          Key: key,
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      )) as {
        Body?: Readable;
        ContentType?: string;
        ContentLength?: number;
        ContentRange?: string;
      };
      if (!out.Body) return null;
      const size = out.ContentLength ?? 0;
      const total = out.ContentRange ? Number(/\/(\d+)$/.exec(out.ContentRange)?.[1] ?? size) : size;
      return { body: out.Body, contentType: out.ContentType ?? contentTypeForKey(key), size, totalSize: total };
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === 'NoSuchKey' || name === 'NotFound') return null;
      throw err;
    }
  }

  async get(key: string): Promise<Buffer | null> {
    const obj = await this.stream(key);
    if (!obj) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of obj.body) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }

  url(key: string): string {
    assertSafeKey(key);
    return s3PublicUrl(this.settings, key);
  }

  async delete(key: string): Promise<void> {
    assertSafeKey(key);
    const { s3, sdk } = await this.connect();
    await s3.send(new sdk.DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key }));
  }
}

/** Picks the driver: S3 when S3_ENABLED is true (config.s3), the local disk otherwise. */
export function createStorage(config: Pick<Config, 'mediaDir' | 'baseUrl' | 's3'>): MediaStorage {
  return config.s3 ? new S3Storage(config.s3) : new LocalStorage(config.mediaDir, config.baseUrl);
}

const perCore = new WeakMap<object, MediaStorage>();

/** The storage of a process (one per Core; tests get one per test Core and its mediaDir). */
export function storageFor(core: { config: Config }): MediaStorage {
  let s = perCore.get(core);
  if (!s) {
    s = createStorage(core.config);
    perCore.set(core, s);
  }
  return s;
}

/** Tests and special roles may inject a storage (e.g. a temporary directory). */
export function setStorage(core: { config: Config }, storage: MediaStorage): void {
  perCore.set(core, storage);
}
