// The instance's rules as reports refer to them (`rule_ids`). The rules themselves are managed by
// the instance area (collection `rules`, Mastodon's Rule: `_id`, `text`, `hint`, `priority`,
// soft-deleted with `deletedAt`); reports only read them.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';

export interface RuleRef {
  _id: Id;
  text: string;
  hint?: string;
  deletedAt?: Date | null;
}

function rulesCollection(core: Core) {
  return core.db.collection<RuleRef>('rules');
}

/** The rules among `ids` that exist and are not deleted. */
export async function findRules(core: Core, ids: Id[]): Promise<RuleRef[]> {
  if (ids.length === 0) return [];
  return rulesCollection(core)
    .find({ _id: { $in: ids }, deletedAt: null })
    .toArray();
}

export function renderRule(rule: RuleRef) {
  return { id: String(rule._id), text: rule.text, hint: rule.hint ?? '' };
}
