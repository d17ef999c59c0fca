import { Writable } from 'node:stream';
import { createLogger, redactUrl } from '../../../services/core/logger.ts';

describe('redactUrl', () => {
  it('hides the values of secret query parameters and keeps the rest', () => {
    expect(redactUrl('/api/v1/timelines/home?access_token=SECRET&limit=5')).toBe(
      '/api/v1/timelines/home?access_token=[redacted]&limit=5',
    );
    expect(redactUrl('/cb?state=s1&code=abc#x')).toBe('/cb?state=s1&code=[redacted]#x');
    expect(redactUrl('/auth/confirmation?confirmation_token=t')).toBe(
      '/auth/confirmation?confirmation_token=[redacted]',
    );
    expect(redactUrl('/health')).toBe('/health');
  });
});

describe('createLogger', () => {
  it('serialises requests without their secrets', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger('info', 'test', sink);
    logger.info(
      { req: { method: 'GET', url: '/x?access_token=SECRET', headers: { authorization: 'Bearer SECRET' } } },
      'hi',
    );
    const out = lines.join('');
    expect(out).toContain('/x?access_token=[redacted]');
    expect(out).not.toContain('SECRET');
  });
});
