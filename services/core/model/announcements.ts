// Announcements by administrators (GET /api/v1/announcements), the users who dismissed each, and
// emoji reactions to them (one per account, announcement and emoji).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface AnnouncementMention {
  accountId: Id;
  username: string;
  acct: string;
  url: string;
}

export interface AnnouncementDoc {
  _id: Id;
  /** Source text as the administrator wrote it. */
  text: string;
  /** Rendered HTML (links, mentions, hashtags). */
  content: string;
  mentions: AnnouncementMention[];
  tagNames: string[];
  /** Optional time range the announcement is about; `allDay` only with a range. */
  startsAt: Date | null;
  endsAt: Date | null;
  allDay: boolean;
  published: boolean;
  publishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AnnouncementDismissalDoc {
  _id: string;
  accountId: Id;
  announcementId: Id;
  createdAt: Date;
}

export interface AnnouncementReactionDoc {
  _id: Id;
  accountId: Id;
  announcementId: Id;
  /** A Unicode emoji or a custom emoji shortcode. */
  name: string;
  customEmojiId: Id | null;
  createdAt: Date;
}

export const announcements = defineCollection<AnnouncementDoc>('announcements', [
  { key: { published: 1 }, name: 'published' },
]);

/** `_id` is `<accountId>:<announcementId>`: dismissing twice is one dismissal. */
export const announcementDismissals = defineCollection<AnnouncementDismissalDoc>('announcement_dismissals', [
  { key: { accountId: 1 }, name: 'account' },
  { key: { announcementId: 1 }, name: 'announcement' },
]);

export const announcementReactions = defineCollection<AnnouncementReactionDoc>('announcement_reactions', [
  { key: { accountId: 1, announcementId: 1, name: 1 }, name: 'account_announcement_name', unique: true },
  { key: { announcementId: 1, name: 1 }, name: 'announcement_name' },
]);
