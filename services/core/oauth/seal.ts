// Symmetric sealing of secrets we must be able to hand back later (re-used access tokens), with
// AES-256-GCM under a key derived from SECRET_KEY_BASE.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

function key(secretKeyBase: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKeyBase, 'fedisrv', 'oauth-token-seal', 32));
}

export function seal(secretKeyBase: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key(secretKeyBase), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64url')).join('.');
}

/** null when the sealed value is malformed or was sealed under another key. */
export function unseal(secretKeyBase: string, sealed: string): string | null {
  const parts = sealed.split('.');
  if (parts.length !== 3) return null;
  try {
    const [iv, tag, data] = parts.map((p) => Buffer.from(p, 'base64url'));
    const decipher = createDecipheriv('aes-256-gcm', key(secretKeyBase), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
