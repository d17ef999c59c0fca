// Remote avatars and headers in our own storage: fetched through the SSRF-safe client (8 MB at
// most), cropped and re-encoded like a local upload (accounts/images.ts) and stored on the account
// with the remote URL they came from, so a changed remote image is fetched again. The account
// entity points at our copy, or at GET /media_proxy/accounts/:id/:kind, which fetches it on first
// request; the `ProfileImagesFetchRequested` job of the media pipeline fetches new ones ahead.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc, type StoredImage } from '../model/accounts.ts';
import { domainPolicy } from '../moderation/domainBlocks.ts';
import { FetchError, safeFetch } from '../activitypub/safeFetch.ts';
import { hostOf } from '../activitypub/uris.ts';
import { storageFor } from './storage.ts';
import {
  deleteProfileImage,
  PROFILE_IMAGE_MAX_BYTES,
  ProfileImageError,
  storeProfileImage,
  type ProfileImageKind,
} from '../accounts/images.ts';

type ImageFields = Pick<AccountDoc, 'domain' | 'avatar' | 'header' | 'avatarRemoteUrl' | 'headerRemoteUrl'>;

function remoteUrlOf(account: ImageFields, kind: ProfileImageKind): string | null {
  return (kind === 'avatar' ? account.avatarRemoteUrl : account.headerRemoteUrl) ?? null;
}

/** Our copy of a remote account's image, if it is the one its server names now. */
export function cachedProfileImage(account: ImageFields, kind: ProfileImageKind): StoredImage | null {
  const image = kind === 'avatar' ? account.avatar : account.header;
  if (!image) return null;
  if (account.domain === null) return image;
  const remote = remoteUrlOf(account, kind);
  return remote !== null && image.remoteUrl === remote ? image : null;
}

/** Fetches and stores a remote account's avatar or header unless our copy is current. */
export async function cacheRemoteProfileImage(
  core: Core,
  accountId: Id,
  kind: ProfileImageKind,
): Promise<StoredImage | null> {
  const coll = collection(core.db, accounts);
  const account = await coll.findOne({ _id: accountId });
  if (!account || account.domain === null) return account ? cachedProfileImage(account, kind) : null;
  const current = cachedProfileImage(account, kind);
  const url = remoteUrlOf(account, kind);
  if (current || url === null) return current;
  const host = hostOf(url);
  if (host === null || (await domainPolicy(core, host)).rejectMedia) return null;
  let data: Buffer;
  try {
    const res = await safeFetch(core.config, url, {
      maxBytes: PROFILE_IMAGE_MAX_BYTES,
      timeoutMs: 30_000,
      headers: { accept: 'image/*' },
    });
    if (res.status !== 200) return null;
    data = res.body;
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    core.logger.info({ accountId: String(accountId), kind, reason: err.reason }, 'remote profile image not cached');
    return null;
  }
  let stored: StoredImage;
  try {
    stored = { ...(await storeProfileImage(core, accountId, kind, data)), remoteUrl: url };
  } catch (err) {
    if (!(err instanceof ProfileImageError)) throw err;
    core.logger.info({ accountId: String(accountId), kind, problem: err.message }, 'remote profile image refused');
    return null;
  }
  const field = kind === 'avatar' ? 'avatar' : 'header';
  const remoteField = kind === 'avatar' ? 'avatarRemoteUrl' : 'headerRemoteUrl';
  const res = await coll.updateOne({ _id: accountId, [remoteField]: url }, { $set: { [field]: stored } });
  if (res.modifiedCount === 0) {
    await deleteProfileImage(core, stored);
    return null;
  }
  // The copy of an earlier image is no longer shown.
  const previous = kind === 'avatar' ? account.avatar : account.header;
  if (previous) await deleteProfileImage(core, previous);
  return stored;
}

/** Both images of a remote account (the media pipeline's job for a new or changed account). */
export async function cacheRemoteProfileImages(core: Core, accountId: Id): Promise<void> {
  await cacheRemoteProfileImage(core, accountId, 'avatar');
  await cacheRemoteProfileImage(core, accountId, 'header');
}

/** Where a remote account's image is served while we hold no current copy. */
export function profileImageProxyUrl(core: Core, accountId: Id, kind: ProfileImageKind, still = false): string {
  return `${core.config.baseUrl}/media_proxy/accounts/${accountId}/${kind}${still ? '_static' : ''}`;
}

/** [url, static url] of an account's avatar or header: our copy, the proxy, or the default image. */
export function profileImageUrls(
  core: Core,
  account: ImageFields & { _id: Id },
  kind: ProfileImageKind,
  missing: string,
): [string, string] {
  const image = cachedProfileImage(account, kind);
  if (image) {
    const storage = storageFor(core);
    return [storage.url(image.path), storage.url(image.staticPath)];
  }
  if (account.domain !== null && remoteUrlOf(account, kind) !== null)
    return [profileImageProxyUrl(core, account._id, kind), profileImageProxyUrl(core, account._id, kind, true)];
  return [`${core.config.baseUrl}${missing}`, `${core.config.baseUrl}${missing}`];
}
