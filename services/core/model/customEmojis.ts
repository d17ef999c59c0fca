// Custom emojis (`:shortcode:` images). Local ones are uploaded by administrators; `domain` is kept
// for the remote emojis federation will bring, so one shortcode can exist once per domain.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface CustomEmojiDoc {
  _id: Id;
  shortcode: string;
  /** null for local emojis. */
  domain: string | null;
  /** Remote emojis: the image as published by their server (remoteEmojis.ts). */
  imageRemoteUrl?: string | null;
  /** Storage keys of the image (PNG or GIF, may be animated) and of its static PNG; '' for a remote one not copied yet. */
  imageKey: string;
  staticKey: string;
  contentType: 'image/png' | 'image/gif';
  size: number;
  category: string | null;
  visibleInPicker: boolean;
  disabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export const customEmojis = defineCollection<CustomEmojiDoc>('custom_emojis', [
  { key: { shortcode: 1, domain: 1 }, name: 'shortcode_domain', unique: true },
]);
