// The instance's rules as reports refer to them (`rule_ids`); the rules themselves are managed by
// the instance area (model/rules.ts). A new report may cite only live rules; a stored report still
// shows the rules it cited after they were deleted.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { rules, type RuleDoc } from '../model/rules.ts';

/** The rules among `ids`: live ones only, unless `includeDeleted`. */
export async function findRules(core: Core, ids: Id[], opts: { includeDeleted?: boolean } = {}): Promise<RuleDoc[]> {
  if (ids.length === 0) return [];
  return collection(core.db, rules)
    .find(opts.includeDeleted ? { _id: { $in: ids } } : { _id: { $in: ids }, deletedAt: null })
    .toArray();
}

export function renderRule(rule: Pick<RuleDoc, '_id' | 'text' | 'hint'>) {
  return { id: String(rule._id), text: rule.text, hint: rule.hint ?? '' };
}
