// Account blocks: who blocked whom (services/core/graph/block.ts writes them).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface BlockDoc {
  _id: Id;
  accountId: Id;
  targetAccountId: Id;
  uri: string | null;
  createdAt: Date;
}

export const blocks = defineCollection<BlockDoc>(
  'blocks',
  [
    { key: { accountId: 1, targetAccountId: 1 }, name: 'account_target', unique: true },
    { key: { targetAccountId: 1 }, name: 'target' },
    { key: { accountId: 1, _id: -1 }, name: 'account' },
    // Counted: who blocks a viewer is kept in the process for a moment (statuses/visibility.ts).
  ],
  { countWrites: true },
);
