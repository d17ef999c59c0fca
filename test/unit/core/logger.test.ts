import { Writable } from 'node:stream';
import { createLogger, redactUrl, requestLineLogger } from '../../../services/core/logger.ts';

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

function captured(): { sink: Writable; text: () => string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { sink, text: () => lines.join('') };
}

describe('createLogger', () => {
  it('serialises requests without their secrets', () => {
    const { sink, text } = captured();
    const logger = createLogger('info', 'test', sink);
    logger.info(
      { req: { method: 'GET', url: '/x?access_token=SECRET', headers: { authorization: 'Bearer SECRET' } } },
      'hi',
    );
    const out = text();
    expect(out).toContain('/x?access_token=[redacted]');
    expect(out).not.toContain('SECRET');
  });
});

describe('requestLineLogger', () => {
  it('writes the request line without secrets, and leaves the other lines redacted', () => {
    const { sink, text } = captured();
    const logger = createLogger('info', 'test', sink);
    const lines = requestLineLogger(logger);
    lines.info(
      {
        reqId: 'r1',
        req: { method: 'GET', url: '/x?access_token=SECRET', headers: { authorization: 'Bearer SECRET' } },
        res: { statusCode: 200 },
      },
      'request completed',
    );
    logger.info({ body: { password: 'SECRET' } }, 'other');
    const out = text();
    expect(out).toContain('"reqId":"r1"');
    expect(out).toContain('/x?access_token=[redacted]');
    expect(out).toContain('"password":"[redacted]"');
    expect(out).not.toContain('SECRET');
  });
});
