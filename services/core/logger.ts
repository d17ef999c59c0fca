import { pino, type Logger } from 'pino';

export type { Logger };

// Secrets never reach the logs: tokens, passwords and cookies are redacted wherever they appear.
const redact = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.password',
  '*.access_token',
  '*.client_secret',
  '*.token',
  '*.code_verifier',
];

export function createLogger(level: string, name: string): Logger {
  return pino({ level, name, redact: { paths: redact, censor: '[redacted]' } });
}
