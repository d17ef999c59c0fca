// Featuring accounts on one's profile (endorsements): only accounts one follows, idempotent.
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { endorsements } from '../model/endorsements.ts';
import { validationFailed } from '../errors.ts';
import { isFollowing } from './relations.ts';

export async function endorseAccount(core: Core, account: AccountDoc, target: AccountDoc): Promise<void> {
  if (target._id === account._id) throw validationFailed('You cannot endorse yourself');
  const coll = collection(core.db, endorsements);
  if (await coll.findOne({ accountId: account._id, targetAccountId: target._id })) return;
  if (!(await isFollowing(core, account._id, target._id)))
    throw validationFailed('You must be already following the person you want to endorse');
  await insertOnce(coll, {
    _id: await nextSerialId(core.db, 'account_pins'),
    accountId: account._id,
    targetAccountId: target._id,
    createdAt: new Date(),
  });
}

export async function unendorseAccount(core: Core, account: AccountDoc, target: AccountDoc): Promise<void> {
  await collection(core.db, endorsements).deleteOne({ accountId: account._id, targetAccountId: target._id });
}
