// Server settings an administrator changes at run time (registration mode, ...), one document per key.
import { defineCollection } from '../db/mongo.ts';

export interface SettingDoc {
  /** Setting name, e.g. `registrations_mode`. */
  _id: string;
  value: string | number | boolean | null;
  updatedAt: Date;
}

export const settings = defineCollection<SettingDoc>('settings');
