// Blocking (Mastodon's BlockService): a block removes follows and pending requests both ways.
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOnce } from '../db/mongo.ts';
import { markFanOutFilters } from '../feeds/fanOutFilters.ts';
import type { AccountDoc } from '../model/accounts.ts';
import { blocks, type BlockDoc } from '../model/blocks.ts';
import { forbidden } from '../errors.ts';
import { writeVerification, type NewEvent } from '../events/outbox.ts';
import { endFollow, endFollowRequest } from './unfollow.ts';
import { graphPair } from './events.ts';

function blockEvent(
  type: 'BlockCreated' | 'BlockDeleted',
  block: BlockDoc,
  account: AccountDoc,
  target: AccountDoc,
): NewEvent {
  return {
    type,
    key: String(account._id),
    payload: { blockId: String(block._id), ...graphPair(account, target), uri: block.uri },
    verify: writeVerification(blocks.name, { _id: block._id }, type === 'BlockCreated'),
  };
}

export async function blockAccount(core: Core, account: AccountDoc, target: AccountDoc): Promise<void> {
  if (account._id === target._id) throw forbidden();
  await endFollow(core, account, target, 'BLOCK', account);
  await endFollow(core, target, account, 'BLOCK', account);
  await endFollowRequest(core, account, target, 'BLOCK', account);
  await endFollowRequest(core, target, account, 'BLOCK', account);
  if (await collection(core.db, blocks).findOne({ accountId: account._id, targetAccountId: target._id })) return;
  const id = await nextSerialId(core.db, 'blocks');
  const block: BlockDoc = {
    _id: id,
    accountId: account._id,
    targetAccountId: target._id,
    uri: account.domain === null ? `${account.uri}#blocks/${id}` : null,
    createdAt: new Date(),
  };
  await markFanOutFilters(core, [target._id]);
  await core.outbox.write([blockEvent('BlockCreated', block, account, target)], async () => {
    await insertOnce(collection(core.db, blocks), block);
  });
}

export async function unblockAccount(core: Core, account: AccountDoc, target: AccountDoc): Promise<void> {
  const block = await collection(core.db, blocks).findOne({ accountId: account._id, targetAccountId: target._id });
  if (!block) return;
  await core.outbox.write([blockEvent('BlockDeleted', block, account, target)], () =>
    collection(core.db, blocks).deleteOne({ _id: block._id }),
  );
}
