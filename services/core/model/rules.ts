// Server rules (GET /api/v1/instance/rules, Instance.rules, report `rule_ids`). Deleting keeps the
// document (`deletedAt`), so reports that cite a rule still find it.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface RuleDoc {
  _id: Id;
  text: string;
  hint: string;
  /** Shown in ascending order, then by id. */
  priority: number;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

export const rules = defineCollection<RuleDoc>('rules', [
  { key: { deletedAt: 1, priority: 1, _id: 1 }, name: 'live_order' },
]);
