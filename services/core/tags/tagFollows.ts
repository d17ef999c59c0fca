// Following hashtags: idempotent both ways; names are matched case-insensitively and NFKC-folded.
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import type { AccountDoc, CachedAccount } from '../model/accounts.ts';
import { tags, type TagDoc } from '../model/tags.ts';
import type { Id } from '../ids.ts';
import { tagFollows, type TagFollowDoc } from '../model/tagFollows.ts';
import { findRecordPage, type PageParams } from '../db/pages.ts';
import { normalizeTagName } from '../text/extract.ts';
import { writeVerification, type NewEvent } from '../events/outbox.ts';

function tagEvent(type: 'TagFollowed' | 'TagUnfollowed', account: AccountDoc, tag: TagDoc): NewEvent {
  return {
    type,
    key: String(account._id),
    payload: { accountId: String(account._id), tagId: String(tag._id), tagName: tag.nameNormalized },
    verify: writeVerification(tagFollows.name, { accountId: account._id, tagId: tag._id }, type === 'TagFollowed'),
  };
}

export async function followTag(core: Core, account: AccountDoc, tag: TagDoc): Promise<void> {
  const coll = collection(core.db, tagFollows);
  if (await coll.findOne({ accountId: account._id, tagId: tag._id })) return;
  const id = await nextSerialId(core.db, 'tag_follows');
  await core.outbox.write([tagEvent('TagFollowed', account, tag)], async () => {
    await insertOnce(coll, { _id: id, accountId: account._id, tagId: tag._id, createdAt: new Date() });
  });
}

export async function unfollowTag(core: Core, account: AccountDoc, tag: TagDoc): Promise<void> {
  const coll = collection(core.db, tagFollows);
  if (!(await coll.findOne({ accountId: account._id, tagId: tag._id }))) return;
  await core.outbox.write([tagEvent('TagUnfollowed', account, tag)], () =>
    coll.deleteOne({ accountId: account._id, tagId: tag._id }),
  );
}

/** Unfollows the tag with this id (a page's button); the tag, or null when there is none. */
export async function unfollowTagById(core: Core, account: AccountDoc, tagId: Id | null): Promise<TagDoc | null> {
  const tag = tagId === null ? null : await collection(core.db, tags).findOne({ _id: tagId });
  if (tag) await unfollowTag(core, account, tag);
  return tag;
}

export async function followsTag(core: Core, account: CachedAccount | null, tag: TagDoc): Promise<boolean> {
  if (!account) return false;
  return (
    (await collection(core.db, tagFollows).countDocuments({ accountId: account._id, tagId: tag._id }, { limit: 1 })) > 0
  );
}

/** The hashtag of that name (case-insensitive, NFKC-folded), or null. */
export function findTagByName(core: Core, name: string): Promise<TagDoc | null> {
  return collection(core.db, tags).findOne({ nameNormalized: normalizeTagName(name) });
}

/** A page of the hashtags the account follows (by follow record), with the records for the page links. */
export async function followedTagsPage(
  core: Core,
  accountId: Id,
  page: PageParams,
): Promise<{ records: TagFollowDoc[]; tags: TagDoc[] }> {
  const found = await findRecordPage(core.db, tagFollows, { accountId }, page, tags, (follow) => follow.tagId);
  return { records: found.records, tags: found.targets };
}
