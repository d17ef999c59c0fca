// Read markers (GET/POST /api/v1/markers): one per (account, timeline), `version` counts saves.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export type MarkerTimeline = 'home' | 'notifications';

export interface MarkerDoc {
  _id: Id;
  accountId: Id;
  timeline: MarkerTimeline;
  lastReadId: string;
  version: number;
  updatedAt: Date;
}

export const markers = defineCollection<MarkerDoc>('markers', [
  { key: { accountId: 1, timeline: 1 }, name: 'account_timeline', unique: true },
]);
