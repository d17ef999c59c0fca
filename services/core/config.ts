// Configuration from the environment, with Mastodon's variable names wherever Mastodon has one.
// Invalid values stop start-up with one line that names the variable (ConfigError).
import { readFileSync, existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { parse as parseDotenv } from 'dotenv';
import { s3SettingsFromEnv, type S3Settings } from './s3Settings.ts';

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.variable = variable;
  }
}

export type RegistrationsMode = 'open' | 'approved' | 'closed';

export interface Config {
  env: 'production' | 'development' | 'test';
  localDomain: string;
  webDomain: string;
  /** https unless LOCAL_HTTPS=false; defaults to false for localhost domains. */
  localHttps: boolean;
  /** Public base URL of the web domain, without a trailing slash. */
  baseUrl: string;
  bindHost: string;
  /** Proxies whose X-Forwarded-For is believed (Mastodon's TRUSTED_PROXY_IP); loopback by default. */
  trustedProxies: string;
  port: number;
  streamingPort: number;
  streamingApiBaseUrl: string | null;
  secretKeyBase: string;
  mongoUrl: string;
  /**
   * MONGO_LIVENESS_SECONDS (default 120, 0 = off): a process that has not reached MongoDB for this
   * long fails its liveness check (`/health`), so its orchestrator restarts it.
   */
  mongoLivenessSeconds: number;
  redisUrl: string;
  /**
   * REDIS_CLUSTER_NODES (comma-separated host:port seeds): when set, Redis is a Redis Cluster reached
   * through ioredis's cluster client and REDIS_URL is unused (its password/TLS are still applied).
   */
  redisClusterNodes: string[];
  /** Prefix of every Redis key (Mastodon's REDIS_NAMESPACE), so deployments can share a server. */
  redisNamespace: string;
  kafkaBrokers: string[];
  kafkaTopicPrefix: string;
  kafkaPartitions: number;
  /**
   * How long a consumer's fetch waits on the broker while there is nothing to read (a fetch is
   * answered as soon as there is). Longer is fewer idle round trips; stopping a consumer and a
   * rebalance of its group wait for the fetch in flight.
   */
  kafkaFetchWaitMs: number;
  smtp: {
    /**
     * SMTP_SERVER was given. Without it nothing can be delivered (127.0.0.1:25 is tried for the
     * mails a user asks for: confirmation, password reset), and notification e-mails are not
     * requested at all: an unconfigured server would retry one per follow and mention for minutes.
     */
    configured: boolean;
    server: string;
    port: number;
    fromAddress: string;
    login: string | null;
    password: string | null;
    /**
     * Seconds between a notification and its e-mail (Mastodon: `deliver_later(wait: 2.minutes)`);
     * a notification gone by then (an undone favourite, a follow withdrawn) is not mailed.
     */
    notificationDelaySeconds: number;
  };
  omniauthOnly: boolean;
  /** External log-in through OpenID Connect (Mastodon's OIDC_* settings); null unless OIDC_ENABLED. */
  oidc: OidcConfig | null;
  /** Federate only with domains on the allow list (Mastodon's LIMITED_FEDERATION_MODE). */
  limitedFederationMode: boolean;
  vapid: { publicKey: string | null; privateKey: string | null };
  /** Where uploaded media lives on disk (local storage driver). */
  mediaDir: string;
  /** S3-compatible media storage instead of the disk (S3_ENABLED=true and S3_* variables). */
  s3: S3Settings | null;
  logLevel: string;
  /** Minimum delay for scheduled statuses, in seconds (Mastodon: 300). Lower only for tests. */
  scheduledStatusMinDelaySeconds: number;
  /** Users active within this many days get home-feed fan-out (Mastodon's USER_ACTIVE_DAYS). */
  userActiveDays: number;
  /** Cached remote media older than this many days is removed (MEDIA_CACHE_RETENTION_PERIOD); null: kept. */
  mediaCacheRetentionDays: number | null;
  federation: FederationConfig;
  /** The machine-translation backend, or null when translation is off. */
  translation: TranslationConfig | null;
}

export interface TranslationConfig {
  backend: 'libretranslate' | 'deepl';
  /** Base URL of the service, e.g. https://api-free.deepl.com or https://translate.example. */
  endpoint: string;
  apiKey: string | null;
  timeoutMs: number;
}

/** ActivityPub settings (README, "Federation"). All off by default. */
export interface FederationConfig {
  /**
   * ALLOWED_PRIVATE_ADDRESSES (Mastodon's name): CIDR ranges (or single addresses) that remote
   * fetches and deliveries may reach although they are private, loopback or link-local.
   */
  allowedPrivateAddresses: string[];
  /** FEDERATION_ALLOW_HTTP: remote fetches and deliveries may use plain http:// (tests, development). */
  allowHttp: boolean;
  /** AUTHORIZED_FETCH (Mastodon's name; implied by LIMITED_FEDERATION_MODE): every ActivityPub GET needs a valid signature. */
  authorizedFetch: boolean;
  /** Reading remote statuses' `replies` (Mastodon's FETCH_REPLIES_* settings; README "Thread backfill"). */
  fetchReplies: FetchRepliesConfig;
  /** Seconds between a vote on a local poll and the Update of its Question (Mastodon: 3 minutes). */
  pollUpdateDelaySeconds: number;
}

export interface FetchRepliesConfig {
  /** FETCH_REPLIES_ENABLED: opening a remote thread crawls its replies (Mastodon 4.4+). */
  enabled: boolean;
  /** FETCH_REPLIES_COOLDOWN_MINUTES: a status's replies are crawled at most this often. */
  cooldownMinutes: number;
  /** FETCH_REPLIES_INITIAL_WAIT_MINUTES: nor before the status is this old. */
  initialWaitMinutes: number;
  /** FETCH_REPLIES_MAX_GLOBAL: statuses one crawl may fetch. */
  maxGlobal: number;
  /** FETCH_REPLIES_MAX_SINGLE: items taken from one replies collection. */
  maxSingle: number;
  /** FETCH_REPLIES_MAX_PAGES: collection pages one crawl may read. */
  maxPages: number;
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback?: string): string {
  const v = env[name];
  if (v === undefined || v === '') {
    if (fallback === undefined) throw new ConfigError(name, 'is required');
    return fallback;
  }
  return v;
}

function optional(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v === '' ? null : v;
}

function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v)) throw new ConfigError(name, `must be a whole number, got "${v}"`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (/^(true|1|yes|on)$/i.test(v)) return true;
  if (/^(false|0|no|off)$/i.test(v)) return false;
  throw new ConfigError(name, `must be true or false, got "${v}"`);
}

function url(env: Env, name: string, fallback: string, schemes: string[]): string {
  const v = str(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(v);
  } catch {
    // The value is not echoed: URLs carry passwords.
    throw new ConfigError(name, 'must be a URL');
  }
  if (!schemes.includes(parsed.protocol.replace(/:$/, ''))) {
    throw new ConfigError(name, `must use one of ${schemes.join(', ')}, got "${parsed.protocol}"`);
  }
  return v;
}

export interface OidcConfig {
  /** The provider's name on the log-in button (OIDC_DISPLAY_NAME). */
  displayName: string;
  issuer: string;
  /** Read the endpoints from the issuer's /.well-known/openid-configuration (OIDC_DISCOVERY). */
  discovery: boolean;
  /** The endpoints when discovery is off (OIDC_AUTH_ENDPOINT, OIDC_TOKEN_ENDPOINT, OIDC_USER_INFO_ENDPOINT, OIDC_JWKS_URI). */
  endpoints: { authorization: string; token: string; userinfo: string | null; jwks: string } | null;
  /** OIDC_SCOPE, comma-separated as Mastodon reads it. */
  scope: string[];
  /** The claim the identity is known by and the username is made from (OIDC_UID_FIELD, default sub). */
  uidField: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Take the provider's e-mail address as confirmed (OIDC_SECURITY_ASSUME_EMAIL_IS_VERIFIED). */
  assumeEmailIsVerified: boolean;
}

function oidcConfig(env: Env): OidcConfig | null {
  if (!bool(env, 'OIDC_ENABLED', false)) return null;
  const discovery = bool(env, 'OIDC_DISCOVERY', false);
  const endpoint = (name: string) => url(env, name, env[name] ?? '', ['https', 'http']);
  return {
    displayName: str(env, 'OIDC_DISPLAY_NAME', 'OpenID Connect'),
    issuer: url(env, 'OIDC_ISSUER', env.OIDC_ISSUER ?? '', ['https', 'http']),
    discovery,
    endpoints: discovery
      ? null
      : {
          authorization: endpoint('OIDC_AUTH_ENDPOINT'),
          token: endpoint('OIDC_TOKEN_ENDPOINT'),
          userinfo: optional(env, 'OIDC_USER_INFO_ENDPOINT') && endpoint('OIDC_USER_INFO_ENDPOINT'),
          jwks: endpoint('OIDC_JWKS_URI'),
        },
    scope: str(env, 'OIDC_SCOPE', 'openid,profile,email')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    uidField: str(env, 'OIDC_UID_FIELD', 'sub'),
    clientId: str(env, 'OIDC_CLIENT_ID'),
    clientSecret: str(env, 'OIDC_CLIENT_SECRET'),
    redirectUri: url(env, 'OIDC_REDIRECT_URI', env.OIDC_REDIRECT_URI ?? '', ['https', 'http']),
    assumeEmailIsVerified: bool(env, 'OIDC_SECURITY_ASSUME_EMAIL_IS_VERIFIED', false),
  };
}

function redisNamespace(env: Env): string {
  const ns = str(env, 'REDIS_NAMESPACE', '');
  if (!/^[a-zA-Z0-9._-]*$/.test(ns))
    throw new ConfigError('REDIS_NAMESPACE', `may hold only letters, digits, ".", "_" and "-", got "${ns}"`);
  return ns;
}

/**
 * TRANSLATION_BACKEND (libretranslate | deepl), TRANSLATION_ENDPOINT, TRANSLATION_API_KEY,
 * TRANSLATION_TIMEOUT_MS; Mastodon's own variables work too: DEEPL_API_KEY (+ DEEPL_PLAN=free|pro),
 * LIBRE_TRANSLATE_ENDPOINT (+ LIBRE_TRANSLATE_API_KEY).
 */
function translationConfig(env: Env): TranslationConfig | null {
  const timeoutMs = int(env, 'TRANSLATION_TIMEOUT_MS', 10_000, 100, 120_000);
  const backend = optional(env, 'TRANSLATION_BACKEND');
  if (backend !== null) {
    if (backend !== 'libretranslate' && backend !== 'deepl')
      throw new ConfigError('TRANSLATION_BACKEND', `must be libretranslate or deepl, got "${backend}"`);
    const fallback = backend === 'deepl' ? 'https://api.deepl.com' : undefined;
    const endpoint = url(env, 'TRANSLATION_ENDPOINT', fallback as string, ['http', 'https']).replace(/\/+$/, '');
    const apiKey = optional(env, 'TRANSLATION_API_KEY');
    if (backend === 'deepl' && apiKey === null) throw new ConfigError('TRANSLATION_API_KEY', 'is required for deepl');
    return { backend, endpoint, apiKey, timeoutMs };
  }
  const deeplKey = optional(env, 'DEEPL_API_KEY');
  if (deeplKey !== null) {
    const plan = str(env, 'DEEPL_PLAN', 'free');
    return {
      backend: 'deepl',
      endpoint: plan === 'pro' ? 'https://api.deepl.com' : 'https://api-free.deepl.com',
      apiKey: deeplKey,
      timeoutMs,
    };
  }
  const libre = optional(env, 'LIBRE_TRANSLATE_ENDPOINT');
  if (libre !== null) {
    const endpoint = url(env, 'LIBRE_TRANSLATE_ENDPOINT', libre, ['http', 'https']).replace(/\/+$/, '');
    return { backend: 'libretranslate', endpoint, apiKey: optional(env, 'LIBRE_TRANSLATE_API_KEY'), timeoutMs };
  }
  return null;
}

const DOMAIN = /^[a-z0-9.-]+(:\d{1,5})?$/i;

/** Parses "127.0.0.1/32,::1/128,10.0.0.5" into normalised "address/prefix" entries. */
/** A comma-separated list of host:port (Kafka brokers, Redis cluster nodes). */
function hostPortList(env: Env, name: string, fallback: string): string[] {
  const list = str(env, name, fallback)
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  for (const n of list) {
    if (!/^[^\s:]+:\d{1,5}$/.test(n))
      throw new ConfigError(name, `must be a comma-separated list of host:port, got "${n}"`);
  }
  return list;
}

function cidrList(env: Env, name: string): string[] {
  const raw = optional(env, name);
  if (raw === null) return [];
  return raw
    .split(/[,\s]+/)
    .filter(Boolean)
    .map((entry) => {
      const [address, prefix, extra] = entry.split('/');
      const family = isIP(address ?? '');
      if (family === 0 || extra !== undefined)
        throw new ConfigError(name, `must list IP addresses or CIDR ranges, got "${entry}"`);
      const max = family === 4 ? 32 : 128;
      const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
      if (bits < 0 || bits > max) throw new ConfigError(name, `has an invalid prefix length in "${entry}"`);
      return `${address}/${bits}`;
    });
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = str(env, 'NODE_ENV', 'development');
  if (!['production', 'development', 'test'].includes(nodeEnv)) {
    throw new ConfigError('NODE_ENV', `must be production, development or test, got "${nodeEnv}"`);
  }
  const port = int(env, 'PORT', 3000, 0, 65535); // 0: any free port (tests)
  const localDomain = str(env, 'LOCAL_DOMAIN', `localhost:${port}`);
  if (!DOMAIN.test(localDomain)) throw new ConfigError('LOCAL_DOMAIN', `must be a host name, got "${localDomain}"`);
  const webDomain = str(env, 'WEB_DOMAIN', localDomain);
  if (!DOMAIN.test(webDomain)) throw new ConfigError('WEB_DOMAIN', `must be a host name, got "${webDomain}"`);
  const isLocalhost = /^(localhost|127\.0\.0\.1)(:\d+)?$/.test(webDomain);
  const localHttps = bool(env, 'LOCAL_HTTPS', !isLocalhost);
  const secretKeyBase = str(
    env,
    'SECRET_KEY_BASE',
    nodeEnv === 'production' ? undefined : 'development-secret-key-base-not-for-production-use-0123456789abcdef',
  );
  if (secretKeyBase.length < 32) throw new ConfigError('SECRET_KEY_BASE', 'must be at least 32 characters long');
  const brokers = hostPortList(env, 'KAFKA_BROKERS', '127.0.0.1:19092');
  const redisClusterNodes = hostPortList(env, 'REDIS_CLUSTER_NODES', '');
  const streamingBase = optional(env, 'STREAMING_API_BASE_URL');
  if (streamingBase !== null) url(env, 'STREAMING_API_BASE_URL', streamingBase, ['ws', 'wss', 'http', 'https']);
  const prefix = str(env, 'KAFKA_TOPIC_PREFIX', 'fedi');
  if (!/^[a-zA-Z0-9._-]+$/.test(prefix))
    throw new ConfigError('KAFKA_TOPIC_PREFIX', `may hold only letters, digits, ".", "_" and "-", got "${prefix}"`);
  return {
    env: nodeEnv as Config['env'],
    localDomain,
    webDomain,
    localHttps,
    baseUrl: `${localHttps ? 'https' : 'http'}://${webDomain}`,
    bindHost: str(env, 'BIND', '127.0.0.1'),
    trustedProxies: str(env, 'TRUSTED_PROXY_IP', 'loopback'),
    port,
    streamingPort: int(env, 'STREAMING_PORT', 4000, 0, 65535),
    streamingApiBaseUrl: streamingBase,
    secretKeyBase,
    mongoUrl: url(env, 'MONGO_URL', 'mongodb://127.0.0.1:27018/fedi', ['mongodb', 'mongodb+srv']),
    mongoLivenessSeconds: int(env, 'MONGO_LIVENESS_SECONDS', 120, 0, 86_400),
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6390/0', ['redis', 'rediss']),
    redisClusterNodes,
    redisNamespace: redisNamespace(env),
    kafkaBrokers: brokers,
    kafkaTopicPrefix: prefix,
    kafkaPartitions: int(env, 'KAFKA_PARTITIONS', 4, 1, 1024),
    kafkaFetchWaitMs: int(env, 'KAFKA_FETCH_WAIT_MS', 5000, 100, 30_000),
    smtp: {
      configured: (env.SMTP_SERVER ?? '').trim() !== '',
      server: str(env, 'SMTP_SERVER', '127.0.0.1'),
      port: int(env, 'SMTP_PORT', 25, 1, 65535),
      fromAddress: str(env, 'SMTP_FROM_ADDRESS', `notifications@${localDomain.replace(/:\d+$/, '')}`),
      login: optional(env, 'SMTP_LOGIN'),
      password: optional(env, 'SMTP_PASSWORD'),
      notificationDelaySeconds: int(env, 'NOTIFICATION_EMAIL_DELAY', 120, 0, 86_400),
    },
    omniauthOnly: bool(env, 'OMNIAUTH_ONLY', false),
    oidc: oidcConfig(env),
    limitedFederationMode: bool(env, 'LIMITED_FEDERATION_MODE', false),
    vapid: { publicKey: optional(env, 'VAPID_PUBLIC_KEY'), privateKey: optional(env, 'VAPID_PRIVATE_KEY') },
    mediaDir: str(env, 'MEDIA_DIR', 'var/media'),
    s3: s3SettingsFromEnv(env),
    logLevel: str(env, 'LOG_LEVEL', nodeEnv === 'test' ? 'warn' : 'info'),
    scheduledStatusMinDelaySeconds: int(env, 'SCHEDULED_STATUS_MIN_DELAY', 300, 0),
    userActiveDays: int(env, 'USER_ACTIVE_DAYS', 7, 1, 3650),
    mediaCacheRetentionDays: optional(env, 'MEDIA_CACHE_RETENTION_PERIOD')
      ? int(env, 'MEDIA_CACHE_RETENTION_PERIOD', 0, 1, 36_500)
      : null,
    federation: {
      allowedPrivateAddresses: cidrList(env, 'ALLOWED_PRIVATE_ADDRESSES'),
      allowHttp: bool(env, 'FEDERATION_ALLOW_HTTP', false),
      authorizedFetch:
        bool(env, 'AUTHORIZED_FETCH', false) ||
        bool(env, 'LIMITED_FEDERATION_MODE', false) ||
        bool(env, 'WHITELIST_MODE', false),
      fetchReplies: {
        enabled: bool(env, 'FETCH_REPLIES_ENABLED', true),
        cooldownMinutes: int(env, 'FETCH_REPLIES_COOLDOWN_MINUTES', 15),
        initialWaitMinutes: int(env, 'FETCH_REPLIES_INITIAL_WAIT_MINUTES', 5),
        maxGlobal: int(env, 'FETCH_REPLIES_MAX_GLOBAL', 1000, 1, 100_000),
        maxSingle: int(env, 'FETCH_REPLIES_MAX_SINGLE', 500, 1, 10_000),
        maxPages: int(env, 'FETCH_REPLIES_MAX_PAGES', 500, 1, 10_000),
      },
      pollUpdateDelaySeconds: int(env, 'POLL_UPDATE_DELAY', 180, 0, 86_400),
    },
    translation: translationConfig(env),
  };
}

/** Reads `.env` (if present) under the process environment: real environment variables win. */
export function loadEnvironment(path = '.env'): Env {
  const fromFile = existsSync(path) ? parseDotenv(readFileSync(path)) : {};
  return { ...fromFile, ...process.env };
}
