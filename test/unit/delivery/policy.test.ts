// Pure rules of delivery: which answers are final or retried, Retry-After, backoff levels and the
// delay tier a waiting host's jobs go through, and the settings read from the environment.
import { classifyError, classifyStatus, parseRetryAfter } from '../../../services/core/activitypub/delivery/send.ts';
import { delayOfLevel, levelForDelay } from '../../../services/core/activitypub/delivery/hostState.ts';
import {
  DEFAULT_DELIVERY_SETTINGS,
  deliverySettingsFromEnv,
} from '../../../services/core/activitypub/delivery/settings.ts';

test('2xx delivered; 4xx final except 408 and 429; 5xx retried except 501', () => {
  expect(classifyStatus(202, null).kind).toBe('delivered');
  expect(classifyStatus(200, null).kind).toBe('delivered');
  expect(classifyStatus(400, null)).toMatchObject({ kind: 'rejected', gone: false });
  expect(classifyStatus(401, null).kind).toBe('rejected');
  expect(classifyStatus(410, null)).toMatchObject({ kind: 'rejected', gone: true });
  expect(classifyStatus(408, null).kind).toBe('failed');
  expect(classifyStatus(429, 5_000)).toMatchObject({ kind: 'failed', class: 'http_429', retryAfterMs: 5_000 });
  expect(classifyStatus(500, null)).toMatchObject({ kind: 'failed', class: 'http_5xx' });
  expect(classifyStatus(503, 1_000)).toMatchObject({ kind: 'failed', retryAfterMs: 1_000 });
  expect(classifyStatus(501, null).kind).toBe('rejected');
  // A redirect is not followed for a POST.
  expect(classifyStatus(301, null).kind).toBe('failed');
});

test('Retry-After as seconds or as an HTTP date', () => {
  const now = Date.parse('2025-03-04T10:00:00Z');
  expect(parseRetryAfter('120', now)).toBe(120_000);
  expect(parseRetryAfter('Tue, 04 Mar 2025 10:01:00 GMT', now)).toBe(60_000);
  expect(parseRetryAfter('Tue, 04 Mar 2025 09:00:00 GMT', now)).toBe(0);
  expect(parseRetryAfter('soon', now)).toBeNull();
  expect(parseRetryAfter(undefined, now)).toBeNull();
});

test('network errors are classed; a refused address is final', () => {
  expect(classifyError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toEqual({
    class: 'connect',
    final: false,
  });
  expect(classifyError(Object.assign(new Error('x'), { code: 'ENOTFOUND' }))).toEqual({ class: 'dns', final: false });
  expect(classifyError(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toEqual({
    class: 'timeout',
    final: false,
  });
  expect(classifyError(Object.assign(new Error('x'), { code: 'CERT_HAS_EXPIRED' }))).toEqual({
    class: 'tls',
    final: false,
  });
  expect(classifyError(Object.assign(new Error('x'), { code: 'EREFUSEDADDRESS' }))).toEqual({
    class: 'refused_address',
    final: true,
  });
});

test('16 retries over about a week; Retry-After picks the level whose delay covers it', () => {
  const s = DEFAULT_DELIVERY_SETTINGS;
  expect(s.retryDelaysMs).toHaveLength(16);
  const total = s.retryDelaysMs.reduce((a, b) => a + b, 0);
  expect(total).toBeGreaterThan(5 * 24 * 3600_000);
  expect(total).toBeLessThan(8 * 24 * 3600_000);
  expect(s.delayTiersMs[0]).toBeLessThanOrEqual(s.retryDelaysMs[0]);
  expect(delayOfLevel(s, 99)).toBe(s.retryDelaysMs[15]);
  expect(levelForDelay(s, 90_000)).toBe(3); // 2 minutes is the first delay of at least 90 s
  expect(levelForDelay(s, 10 * 24 * 3600_000)).toBe(16);
});

test('settings from DELIVERY_* variables; bad values name the variable', () => {
  const s = deliverySettingsFromEnv({ DELIVERY_RETRY_DELAYS_MS: '100,200', DELIVERY_BREAKER_FAILURES: '3' });
  expect(s.retryDelaysMs).toEqual([100, 200]);
  expect(s.breakerFailures).toBe(3);
  expect(s.totalTimeoutMs).toBe(30_000);
  expect(s.connectTimeoutMs).toBe(10_000);
  expect(() => deliverySettingsFromEnv({ DELIVERY_TIMEOUT_MS: 'soon' })).toThrow(/DELIVERY_TIMEOUT_MS/);
  expect(() => deliverySettingsFromEnv({ DELIVERY_DELAY_TIERS_MS: '1,x' })).toThrow(/DELIVERY_DELAY_TIERS_MS/);
});
