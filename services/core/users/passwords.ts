// Password hashing with argon2id (memory-hard; @node-rs/argon2's default algorithm) at OWASP's
// recommended cost (19 MiB, 2 passes).
import { hash, verify } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 72;

export async function hashPassword(password: string): Promise<string> {
  return hash(password, { memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** A random password for accounts made on the command line (printed once). */
export function generatePassword(): string {
  return randomBytes(24).toString('base64url');
}
