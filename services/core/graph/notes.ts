// Private notes about other accounts: an empty comment removes the note.
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { accountNotes } from '../model/accountNotes.ts';
import { validationFailed } from '../errors.ts';

export const NOTE_MAX_LENGTH = 2000;

export async function setAccountNote(
  core: Core,
  account: AccountDoc,
  target: AccountDoc,
  comment: string,
): Promise<void> {
  if ([...comment].length > NOTE_MAX_LENGTH)
    throw validationFailed(`Comment is too long (maximum is ${NOTE_MAX_LENGTH} characters)`);
  const coll = collection(core.db, accountNotes);
  const filter = { accountId: account._id, targetAccountId: target._id };
  if (comment.trim() === '') {
    await coll.deleteOne(filter);
    return;
  }
  const res = await coll.updateOne(filter, { $set: { comment, updatedAt: new Date() } });
  if (res.matchedCount > 0) return;
  await coll
    .insertOne({ _id: await nextSerialId(core.db, 'account_notes'), ...filter, comment, updatedAt: new Date() })
    .catch(async () => coll.updateOne(filter, { $set: { comment, updatedAt: new Date() } }));
}
