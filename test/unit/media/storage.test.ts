import { mkdtemp, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LocalStorage,
  S3Storage,
  createStorage,
  s3SettingsFromEnv,
  s3PublicUrl,
  isSafeKey,
  contentTypeForKey,
} from '../../../services/core/media/storage.ts';
import { ConfigError } from '../../../services/core/config.ts';

describe('storage driver selection', () => {
  const config = { mediaDir: '/tmp/x', baseUrl: 'https://social.example' };

  it('uses the local disk unless S3_ENABLED is true', () => {
    expect(createStorage({ ...config, s3: s3SettingsFromEnv({}) }).driver).toBe('local');
    expect(createStorage({ ...config, s3: s3SettingsFromEnv({ S3_ENABLED: 'false', S3_BUCKET: 'b' }) }).driver).toBe(
      'local',
    );
  });

  it('uses S3 with Mastodon variable names', () => {
    const s = createStorage({
      ...config,
      s3: s3SettingsFromEnv({
        S3_ENABLED: 'true',
        S3_BUCKET: 'media',
        S3_ENDPOINT: 'http://127.0.0.1:9000',
        S3_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'ak',
        AWS_SECRET_ACCESS_KEY: 'sk',
      }),
    });
    expect(s).toBeInstanceOf(S3Storage);
    expect((s as S3Storage).settings).toMatchObject({
      bucket: 'media',
      region: 'eu-west-1',
      accessKeyId: 'ak',
      forcePathStyle: true,
    });
    expect(s.url('media_attachments/files/1/original/ab.png')).toBe(
      'http://127.0.0.1:9000/media/media_attachments/files/1/original/ab.png',
    );
  });

  it('prefers S3_ALIAS_HOST for public URLs', () => {
    const settings = s3SettingsFromEnv({ S3_ENABLED: 'true', S3_BUCKET: 'b', S3_ALIAS_HOST: 'files.example' });
    expect(settings).not.toBeNull();
    expect(s3PublicUrl(settings!, 'a/b.png')).toBe('https://files.example/a/b.png');
    const aws = s3SettingsFromEnv({ S3_ENABLED: '1', S3_BUCKET: 'b', S3_REGION: 'us-west-2' });
    expect(s3PublicUrl(aws!, 'a/b.png')).toBe('https://b.s3.us-west-2.amazonaws.com/a/b.png');
  });

  it('addresses buckets path-style for custom endpoints unless S3_OVERRIDE_PATH_STYLE says otherwise', () => {
    expect(
      s3SettingsFromEnv({ S3_ENABLED: 'true', S3_BUCKET: 'b', S3_ENDPOINT: 'http://minio:9000' })?.forcePathStyle,
    ).toBe(true);
    expect(
      s3SettingsFromEnv({
        S3_ENABLED: 'true',
        S3_BUCKET: 'b',
        S3_ENDPOINT: 'http://minio:9000',
        S3_OVERRIDE_PATH_STYLE: 'false',
      })?.forcePathStyle,
    ).toBe(false);
    expect(s3SettingsFromEnv({ S3_ENABLED: 'true', S3_BUCKET: 'b' })?.forcePathStyle).toBe(false);
    expect(
      s3SettingsFromEnv({ S3_ENABLED: 'true', S3_BUCKET: 'b', S3_CLOUDFRONT_HOST: 'cdn.example' })?.aliasHost,
    ).toBe('cdn.example');
  });

  it('rejects an S3 setup without a bucket or with a bad endpoint', () => {
    expect(() => s3SettingsFromEnv({ S3_ENABLED: 'true' })).toThrow(ConfigError);
    expect(() => s3SettingsFromEnv({ S3_ENABLED: 'true', S3_BUCKET: 'b', S3_ENDPOINT: 'not a url' })).toThrow(
      /S3_ENDPOINT/,
    );
  });
});

describe('local storage', () => {
  let dir: string;
  let storage: LocalStorage;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'media-'));
    storage = new LocalStorage(dir, 'http://localhost:3000/');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('puts, reads, streams, serves a URL and deletes', async () => {
    const key = 'media_attachments/files/7/original/abc.png';
    await storage.put(key, Buffer.from('hello'), 'image/png');
    expect(await readFile(join(dir, key), 'utf8')).toBe('hello');
    expect((await storage.get(key))?.toString()).toBe('hello');
    const s = await storage.stream(key);
    expect(s?.contentType).toBe('image/png');
    expect(s?.size).toBe(5);
    s?.body.destroy();
    expect(storage.url(key)).toBe('http://localhost:3000/system/media_attachments/files/7/original/abc.png');
    await storage.delete(key);
    expect(await storage.get(key)).toBeNull();
    expect(await storage.stream(key)).toBeNull();
  });

  it('refuses keys that could escape the root', async () => {
    for (const bad of ['../etc/passwd', 'a/../../b', '/abs/path', 'a//b', 'a/./b', 'a\\b', '']) {
      expect(isSafeKey(bad)).toBe(false);
      await expect(storage.get(bad)).rejects.toThrow(/unsafe/);
    }
  });

  it('derives content types from extensions', () => {
    expect(contentTypeForKey('x/y.mp4')).toBe('video/mp4');
    expect(contentTypeForKey('x/y.unknownext')).toBe('application/octet-stream');
  });
});

describe('Range header', () => {
  it('parses single byte ranges and refuses unsatisfiable ones', async () => {
    const { parseRange } = await import('../../../services/api/files/index.ts');
    expect(parseRange(undefined, 100)).toBeNull();
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-5', 100)).toEqual({ start: 95, end: 99 });
    expect(parseRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=5-2', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-1,5-6', 100)).toBeNull();
    expect(parseRange('items=0-1', 100)).toBeNull();
  });
});
