// The limits this server enforces and advertises in /api/v2/instance `configuration` (Mastodon's
// defaults). One place, so what clients are told is what the server does.
export const LIMITS = {
  accounts: {
    maxFeaturedTags: 10,
    maxPinnedStatuses: 5,
    maxDisplayNameLength: 30,
    maxNoteLength: 500,
    maxProfileFields: 4,
    profileFieldNameLimit: 255,
    profileFieldValueLimit: 255,
  },
  statuses: { maxCharacters: 500, maxMediaAttachments: 4, charactersReservedPerUrl: 23 },
  mediaAttachments: {
    supportedMimeTypes: [
      'image/jpeg',
      'image/png',
      'image/gif',
      'image/heic',
      'image/heif',
      'image/webp',
      'image/avif',
      'video/webm',
      'video/mp4',
      'video/quicktime',
      'video/ogg',
      'audio/wave',
      'audio/wav',
      'audio/x-wav',
      'audio/x-pn-wave',
      'audio/vnd.wave',
      'audio/ogg',
      'audio/vorbis',
      'audio/mpeg',
      'audio/mp3',
      'audio/webm',
      'audio/flac',
      'audio/aac',
      'audio/m4a',
      'audio/x-m4a',
      'audio/mp4',
      'audio/3gpp',
      'video/x-ms-asf',
    ],
    descriptionLimit: 1500,
    imageSizeLimit: 16 * 1024 * 1024,
    imageMatrixLimit: 33_177_600,
    videoSizeLimit: 99 * 1024 * 1024,
    videoFrameRateLimit: 120,
    videoMatrixLimit: 8_294_400,
  },
  polls: { maxOptions: 4, maxCharactersPerOption: 50, minExpiration: 300, maxExpiration: 2_629_746 },
} as const;

/** The Mastodon release whose API this server follows; clients parse it for feature detection. */
export const MASTODON_API_VERSION = '4.4.0';
/** This software, as NodeInfo names it. */
export const SOFTWARE = { name: 'fedisrv', version: '0.1.0' } as const;
/**
 * Instance `version`: the Mastodon version first, so clients that parse it (Mastodon.py splits at the
 * space, masto.js and the web apps read the leading x.y.z) see a Mastodon-compatible server.
 */
export const INSTANCE_VERSION = `${MASTODON_API_VERSION} (compatible; ${SOFTWARE.name} ${SOFTWARE.version})`;
/**
 * `api_versions.mastodon`: the highest level all of whose features are implemented (conventions
 * §12). Mastodon's documentation ties 3 to `attribution_domains`, 4 to `DELETE /api/v1/media/:id`
 * and `delete_media`, 5 to the filter action `blur`: all here. Level 6 (4.4.0's release) is tied to
 * no documented feature, so it cannot be checked and is not claimed; that also holds back 7 (quote
 * posts, implemented), 8 (annual reports, implemented; `/api/v1/profile` missing), 9
 * (`avatar_description`/`header_description`, missing) and 10 (collections federation and
 * `supported_types` on grouped notifications, missing).
 */
export const MASTODON_API_LEVEL = 5;
