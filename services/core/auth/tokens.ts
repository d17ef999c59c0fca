import { hash, randomBytes } from 'node:crypto';

/** A new random secret (access token, code, client secret, confirmation token): 43 url-safe characters. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** How secrets are stored: a leak of the database leaks no working secret. */
export function hashSecret(secret: string): string {
  // The one-shot form: no Hash object per call (every API request hashes its token).
  return hash('sha256', secret, 'hex');
}
