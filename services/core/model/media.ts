// Media attachments: uploaded by a local account (or referenced by a remote status), processed
// into web-friendly files, then attached to at most one status (or held by a scheduled status).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export type MediaType = 'image' | 'gifv' | 'video' | 'audio' | 'unknown';
/** queued: waits for the media pipeline; complete: files ready; failed: could not be processed. */
export type ProcessingState = 'queued' | 'in_progress' | 'complete' | 'failed';

export interface ImageDimensions {
  width: number;
  height: number;
  /** "WxH" as Mastodon renders it. */
  size: string;
  aspect: number;
}

export interface MediaMeta {
  original?: ImageDimensions & { frameRate?: string; duration?: number; bitrate?: number };
  small?: ImageDimensions;
  focus?: { x: number; y: number };
  /** Video and audio. */
  length?: string;
  duration?: number;
  fps?: number;
  audioEncode?: string;
  audioBitrate?: string;
  audioChannels?: string;
}

export interface MediaFiles {
  /** Storage key of the processed original; null until processed (or for remote media not cached). */
  original: string | null;
  /** Storage key of the preview: small image, or video/gif thumbnail. */
  small: string | null;
  /** Content type of the processed original. */
  contentType: string | null;
  /** Storage key of the raw upload waiting for the media pipeline; removed once processed. */
  upload: string | null;
  /** Size of the processed original in bytes. */
  fileSize: number | null;
  /** `small` is a preview the uploader gave (`thumbnail`), kept when the file is (re)processed. */
  customThumbnail?: boolean;
}

export interface MediaAttachmentDoc {
  _id: Id;
  accountId: Id;
  statusId: Id | null;
  scheduledStatusId: Id | null;
  type: MediaType;
  processing: ProcessingState;
  /** Why processing failed (shown in the 422 of GET /api/v1/media/:id). */
  processingError: string | null;
  files: MediaFiles;
  meta: MediaMeta | null;
  description: string | null;
  blurhash: string | null;
  /** Remote media: where the file lives on its server; null for local uploads. */
  remoteUrl: string | null;
  previewRemoteUrl: string | null;
  /** Remote media: when its file was copied into our storage (null/absent: served by the media proxy). */
  cachedAt?: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const mediaAttachments = defineCollection<MediaAttachmentDoc>('media_attachments', [
  { key: { accountId: 1, _id: -1 }, name: 'account' },
  { key: { statusId: 1 }, name: 'status' },
  { key: { scheduledStatusId: 1 }, name: 'scheduled_status' },
  { key: { cachedAt: 1 }, name: 'cached' },
]);
