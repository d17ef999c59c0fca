// S3-compatible media storage settings, read with Mastodon's variable names (part of Config, so a
// bad value stops start-up with one line naming the variable).
import { ConfigError } from './config.ts';

type Env = Record<string, string | undefined>;

export interface S3Settings {
  bucket: string;
  endpoint: string | null;
  region: string;
  accessKeyId: string | null;
  secretAccessKey: string | null;
  /** Public host (CDN or proxy) serving the bucket, e.g. files.example.com. */
  aliasHost: string | null;
  protocol: 'http' | 'https';
  forcePathStyle: boolean;
  permission: string | null;
}

/** S3 settings from Mastodon's variable names; null when S3_ENABLED is not true. */
export function s3SettingsFromEnv(env: Env): S3Settings | null {
  const enabled = env.S3_ENABLED ?? '';
  if (!/^(true|1|yes|on)$/i.test(enabled)) return null;
  const bucket = env.S3_BUCKET ?? '';
  if (!bucket) throw new ConfigError('S3_BUCKET', 'is required when S3_ENABLED is true');
  const endpoint = env.S3_ENDPOINT || null;
  if (endpoint !== null) {
    try {
      new URL(endpoint);
    } catch {
      throw new ConfigError('S3_ENDPOINT', 'must be a URL');
    }
  }
  const protocol = (env.S3_PROTOCOL || 'https').toLowerCase();
  if (protocol !== 'http' && protocol !== 'https')
    throw new ConfigError('S3_PROTOCOL', `must be http or https, got "${protocol}"`);
  return {
    bucket,
    endpoint,
    region: env.S3_REGION || 'us-east-1',
    accessKeyId: env.AWS_ACCESS_KEY_ID || null,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY || null,
    aliasHost: env.S3_ALIAS_HOST || env.S3_CLOUDFRONT_HOST || null,
    protocol,
    // S3-compatible servers (MinIO, Garage, Ceph) mostly want path-style addressing: the default
    // with a custom endpoint; S3_OVERRIDE_PATH_STYLE (Mastodon's name) decides when given.
    forcePathStyle: env.S3_OVERRIDE_PATH_STYLE ? /^true$/i.test(env.S3_OVERRIDE_PATH_STYLE) : endpoint !== null,
    permission: env.S3_PERMISSION === undefined ? 'public-read' : env.S3_PERMISSION || null,
  };
}
