// Run-time server settings (stored in the `settings` collection). Registration mode defaults to
// "open", like a fresh Mastodon install configured for open sign-ups.
import type { Core } from '../context.ts';
import type { RegistrationsMode } from '../config.ts';
import { collection } from '../db/mongo.ts';
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
