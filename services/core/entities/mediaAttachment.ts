// MediaAttachment entity (entities reference §6). `url` is null while the upload is processing.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { ImageDimensions, MediaAttachmentDoc, MediaMeta } from '../model/media.ts';
import { storageFor } from '../media/storage.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** An image's geometry, which Mastodon also repeats at the top level of a video's meta. */
const Geometry = {
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
  size: Type.Optional(Type.String()),
  aspect: Type.Optional(Type.Number()),
};

const Dimensions = Type.Object({
  ...Geometry,
  frame_rate: Type.Optional(Type.String()),
  duration: Type.Optional(Type.Number()),
  bitrate: Type.Optional(Type.Integer()),
});

export const MediaMetaEntity = Type.Object({
  original: Type.Optional(Dimensions),
  small: Type.Optional(Dimensions),
  focus: Type.Optional(Type.Object({ x: Type.Number(), y: Type.Number() })),
  length: Type.Optional(Type.String()),
  duration: Type.Optional(Type.Number()),
  fps: Type.Optional(Type.Integer()),
  ...Geometry,
  audio_encode: Type.Optional(Type.String()),
  audio_bitrate: Type.Optional(Type.String()),
  audio_channels: Type.Optional(Type.String()),
});

export const MediaAttachmentEntity = Type.Object({
  id: Type.String(),
  type: Type.Union([
    Type.Literal('image'),
    Type.Literal('gifv'),
    Type.Literal('video'),
    Type.Literal('audio'),
    Type.Literal('unknown'),
  ]),
  url: NullableString,
  preview_url: NullableString,
  remote_url: NullableString,
  preview_remote_url: NullableString,
  text_url: NullableString,
  meta: Type.Union([MediaMetaEntity, Type.Null()]),
  description: NullableString,
  blurhash: NullableString,
});
export type MediaAttachmentEntity = Static<typeof MediaAttachmentEntity>;

function geometry({ width, height, size, aspect }: ImageDimensions): ImageDimensions {
  return { width, height, size, aspect };
}

function presentMeta(meta: MediaMeta | null): Static<typeof MediaMetaEntity> | null {
  if (!meta) return null;
  const out: Static<typeof MediaMetaEntity> = {};
  if (meta.original) {
    const o = meta.original;
    out.original = {
      ...(o.width ? geometry(o) : {}),
      ...(o.frameRate !== undefined ? { frame_rate: o.frameRate } : {}),
      ...(o.duration !== undefined ? { duration: o.duration } : {}),
      ...(o.bitrate !== undefined ? { bitrate: o.bitrate } : {}),
    };
  }
  if (meta.small) out.small = geometry(meta.small);
  if (meta.focus) out.focus = { x: meta.focus.x, y: meta.focus.y };
  if (meta.length !== undefined) out.length = meta.length;
  if (meta.duration !== undefined) out.duration = meta.duration;
  if (meta.fps !== undefined) out.fps = meta.fps;
  // Mastodon repeats the original's geometry at the top level for videos.
  if (meta.fps !== undefined && meta.original?.width) Object.assign(out, geometry(meta.original));
  if (meta.audioEncode !== undefined) out.audio_encode = meta.audioEncode;
  if (meta.audioBitrate !== undefined) out.audio_bitrate = meta.audioBitrate;
  if (meta.audioChannels !== undefined) out.audio_channels = meta.audioChannels;
  return out;
}

export function presentMediaAttachment(core: Core, doc: MediaAttachmentDoc): MediaAttachmentEntity {
  const storage = storageFor(core);
  const ready = doc.processing === 'complete';
  // Remote media not cached here goes through our media proxy, which fetches it (Mastodon's
  // `needs_redownload?`); files of unknown type are never downloaded and stay links.
  const proxied = ready && doc.remoteUrl !== null && doc.files.original === null && doc.type !== 'unknown';
  const url =
    ready && doc.files.original
      ? storage.url(doc.files.original)
      : proxied
        ? mediaProxyUrl(core, doc._id, 'original')
        : doc.remoteUrl && ready
          ? doc.remoteUrl
          : null;
  // A custom thumbnail is there before processing ends; a generated one only after.
  const preview = doc.files.small
    ? storage.url(doc.files.small)
    : proxied
      ? mediaProxyUrl(core, doc._id, 'small')
      : (doc.previewRemoteUrl ?? null);
  return {
    id: String(doc._id),
    type: doc.type,
    url,
    preview_url: preview,
    remote_url: doc.remoteUrl,
    preview_remote_url: doc.previewRemoteUrl,
    text_url: null,
    meta: presentMeta(doc.meta),
    description: doc.description,
    blurhash: doc.blurhash,
  };
}

/** GET /media_proxy/:id/:style: a remote attachment, fetched into our storage on first request. */
export function mediaProxyUrl(core: Core, id: bigint, style: 'original' | 'small'): string {
  return `${core.config.baseUrl}/media_proxy/${id}/${style}`;
}
