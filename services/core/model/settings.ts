// Server settings an administrator changes at run time (registration mode, ...), one document per key.
import { defineCollection } from '../db/mongo.ts';

export interface SettingDoc {
  /** Setting name, e.g. `registrations_mode`. */
  _id: string;
  value: string | number | boolean | null | Record<string, string>;
  updatedAt: Date;
}

// Counted: the feed access settings, read by every public timeline request, are kept in the
// process for a moment (settings/feedAccess.ts).
export const settings = defineCollection<SettingDoc>('settings', [], { countWrites: true });
