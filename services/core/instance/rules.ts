// Server rules: the ordered list every client shows before sign-up and in reports.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { rules, type RuleDoc } from '../model/rules.ts';
import { invalidateInstanceCache } from './cache.ts';

export const RULE_TEXT_LIMIT = 300;
export const RULE_HINT_LIMIT = 2000;

export class RuleError extends Error {}

export async function listRules(core: Core): Promise<RuleDoc[]> {
  return collection(core.db, rules).find({ deletedAt: null }).sort({ priority: 1, _id: 1 }).toArray();
}

function check(text: string, hint: string): void {
  if (text.trim() === '') throw new RuleError('Text can\u2019t be blank');
  if ([...text].length > RULE_TEXT_LIMIT)
    throw new RuleError(`Text is too long (maximum is ${RULE_TEXT_LIMIT} characters)`);
  if ([...hint].length > RULE_HINT_LIMIT)
    throw new RuleError(`Hint is too long (maximum is ${RULE_HINT_LIMIT} characters)`);
}

export async function addRule(core: Core, input: { text: string; hint?: string; priority?: number }): Promise<RuleDoc> {
  const hint = input.hint ?? '';
  check(input.text, hint);
  const now = new Date();
  const doc: RuleDoc = {
    _id: await nextSerialId(core.db, 'rules'),
    text: input.text.trim(),
    hint: hint.trim(),
    priority: input.priority ?? 0,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  await collection(core.db, rules).insertOne(doc);
  await invalidateInstanceCache(core);
  return doc;
}

export async function updateRule(
  core: Core,
  id: Id,
  changes: { text?: string; hint?: string; priority?: number },
): Promise<RuleDoc | null> {
  const coll = collection(core.db, rules);
  const current = await coll.findOne({ _id: id, deletedAt: null });
  if (!current) return null;
  const next = { ...current, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) };
  check(next.text, next.hint);
  const updated = await coll.findOneAndUpdate(
    { _id: id, deletedAt: null },
    { $set: { text: next.text.trim(), hint: next.hint.trim(), priority: next.priority, updatedAt: new Date() } },
    { returnDocument: 'after' },
  );
  await invalidateInstanceCache(core);
  return updated;
}

export async function removeRule(core: Core, id: Id): Promise<boolean> {
  const res = await collection(core.db, rules).updateOne(
    { _id: id, deletedAt: null },
    { $set: { deletedAt: new Date(), updatedAt: new Date() } },
  );
  await invalidateInstanceCache(core);
  return res.modifiedCount === 1;
}
