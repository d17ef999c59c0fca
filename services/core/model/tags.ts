// Hashtags: one document per normalised name, with serial ids (Tag entity ids since Mastodon 4.3.1).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface TagDoc {
  _id: Id;
  /** Display name: as first written. */
  name: string;
  /** Lower-cased, folded form used for lookups. */
  nameNormalized: string;
  createdAt: Date;
  updatedAt: Date;
}

export const tags = defineCollection<TagDoc>('tags', [{ key: { nameNormalized: 1 }, name: 'name', unique: true }]);
