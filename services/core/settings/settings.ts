// Run-time server settings (stored in the `settings` collection). Registration mode defaults to
// "open", like a fresh Mastodon install configured for open sign-ups.
import type { Db } from 'mongodb';
import type { Core } from '../context.ts';
import type { RegistrationsMode } from '../config.ts';
import { collection, insertOrTwin } from '../db/mongo.ts';
import { settings } from '../model/settings.ts';
import { invalidateInstanceCache } from '../instance/cache.ts';

export const REGISTRATIONS_MODES: readonly RegistrationsMode[] = ['open', 'approved', 'closed'];

export function isRegistrationsMode(value: string): value is RegistrationsMode {
  return (REGISTRATIONS_MODES as readonly string[]).includes(value);
}

export async function getRegistrationsMode(core: Core): Promise<RegistrationsMode> {
  const doc = await collection(core.db, settings).findOne({ _id: 'registrations_mode' });
  return typeof doc?.value === 'string' && isRegistrationsMode(doc.value) ? doc.value : 'open';
}

export async function setRegistrationsMode(core: Core, mode: RegistrationsMode): Promise<void> {
  await collection(core.db, settings).updateOne(
    { _id: 'registrations_mode' },
    { $set: { value: mode, updatedAt: new Date() } },
    { upsert: true },
  );
  await invalidateInstanceCache(core); // the instance documents and NodeInfo show the mode
}

/** Whether sign-up through the API is possible at all (OMNIAUTH_ONLY disables it). */
export async function registrationsAllowed(core: Core): Promise<boolean> {
  return !core.config.omniauthOnly && (await getRegistrationsMode(core)) !== 'closed';
}

/**
 * The setting `key`, generated when missing: the first process to store it wins and the others
 * use its value (key pairs every process of the deployment must share).
 */
export async function generatedOnce<T extends { [K in keyof T]: string }>(
  db: Db,
  key: string,
  valid: (value: unknown) => value is T,
  generate: () => T | Promise<T>,
): Promise<T> {
  const coll = collection(db, settings);
  const stored = await coll.findOne({ _id: key });
  if (valid(stored?.value)) return stored.value;
  const generated = await generate();
  const kept = await insertOrTwin(coll, { _id: key, value: { ...generated }, updatedAt: new Date() }, { _id: key });
  if (!valid(kept.value)) throw new Error(`setting ${key} holds no valid value`);
  return kept.value;
}
