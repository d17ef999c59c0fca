import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, loadEnvironment } from '../../services/core/config.ts';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has working defaults for development', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.streamingPort).toBe(4000);
    expect(config.localDomain).toBe('localhost:3000');
    expect(config.baseUrl).toBe('http://localhost:3000');
    expect(config.kafkaBrokers).toEqual(['127.0.0.1:19092']);
    expect(config.mongoUrl).toBe('mongodb://127.0.0.1:27018/fedi');
    expect(config.redisUrl).toBe('redis://127.0.0.1:6390/0');
  });

  it('reads Mastodon variable names', () => {
    const config = loadConfig({
      LOCAL_DOMAIN: 'example.social',
      WEB_DOMAIN: 'www.example.social',
      PORT: '8080',
      SMTP_SERVER: 'mail.example.social',
      SMTP_PORT: '587',
      SMTP_FROM_ADDRESS: 'notifications@example.social',
      OMNIAUTH_ONLY: 'true',
      KAFKA_BROKERS: 'k1:9092, k2:9092',
    });
    expect(config.baseUrl).toBe('https://www.example.social');
    expect(config.port).toBe(8080);
    expect(config.smtp).toMatchObject({
      server: 'mail.example.social',
      port: 587,
      fromAddress: 'notifications@example.social',
    });
    expect(config.omniauthOnly).toBe(true);
    expect(config.kafkaBrokers).toEqual(['k1:9092', 'k2:9092']);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ STREAMING_PORT: '-1' }, 'STREAMING_PORT'],
    [{ LOCAL_DOMAIN: 'not a domain' }, 'LOCAL_DOMAIN'],
    [{ KAFKA_BROKERS: 'localhost' }, 'KAFKA_BROKERS'],
    [{ KAFKA_TOPIC_PREFIX: 'a b' }, 'KAFKA_TOPIC_PREFIX'],
    [{ MONGO_URL: 'postgres://x/y' }, 'MONGO_URL'],
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL'],
    [{ OMNIAUTH_ONLY: 'maybe' }, 'OMNIAUTH_ONLY'],
    [{ SMTP_PORT: '25x' }, 'SMTP_PORT'],
    [{ STREAMING_API_BASE_URL: 'ftp://stream.example' }, 'STREAMING_API_BASE_URL'],
    [{ NODE_ENV: 'production' }, 'SECRET_KEY_BASE'],
    [{ SECRET_KEY_BASE: 'short' }, 'SECRET_KEY_BASE'],
  ])('rejects %j with one line naming %s', (env, variable) => {
    const err = configError(env);
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(variable);
    expect(err.message).not.toContain('\n');
  });

  it('does not echo secrets it rejects', () => {
    const err = configError({ SECRET_KEY_BASE: 'tooshort-secret' });
    expect(err.message).not.toContain('tooshort-secret');
  });
});

describe('loadEnvironment', () => {
  it('reads .env under the real environment, which wins', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fedisrv-env-'));
    const file = join(dir, '.env');
    writeFileSync(file, 'FEDISRV_TEST_FROM_FILE=file\nFEDISRV_TEST_BOTH=file\n');
    process.env.FEDISRV_TEST_BOTH = 'process';
    try {
      const env = loadEnvironment(file);
      expect(env.FEDISRV_TEST_FROM_FILE).toBe('file');
      expect(env.FEDISRV_TEST_BOTH).toBe('process');
      expect(loadEnvironment(join(dir, 'missing.env')).FEDISRV_TEST_FROM_FILE).toBeUndefined();
    } finally {
      delete process.env.FEDISRV_TEST_BOTH;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
