// Account blocks: who blocked whom (services/core/graph/block.ts writes them).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';
import { accountRecordIndexes, type AccountRecordDoc } from './accountRecord.ts';

export interface BlockDoc extends AccountRecordDoc {
  targetAccountId: Id;
  uri: string | null;
}

export const blocks = defineCollection<BlockDoc>(
  'blocks',
  [
    ...accountRecordIndexes('targetAccountId', { unique: 'account_target', newestFirst: 'account' }),
    { key: { targetAccountId: 1 }, name: 'target' },
    // Counted: who blocks a viewer is kept in the process for a moment (statuses/visibility.ts).
  ],
  { countWrites: true },
);
