// Remote avatars and headers in our own storage: fetched through the SSRF-safe client (8 MB at
// most), cropped and re-encoded like a local upload (accounts/images.ts) and stored on the account
// with the remote URL they came from, so a changed remote image is fetched again. The account
// entity points at our copy, or at GET /media_proxy/accounts/:id/:kind, which fetches it on first
// request; the `ProfileImagesFetchRequested` job of the media pipeline fetches new ones ahead.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc, type StoredImage } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { storageFor } from './storage.ts';
import { downloadRemoteFile } from './remoteFile.ts';
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
  const data = await downloadRemoteFile(core, url, {
    maxBytes: PROFILE_IMAGE_MAX_BYTES,
    timeoutMs: 30_000,
    accept: 'image/*',
    what: 'remote profile image',
    logFields: { accountId: String(accountId), kind },
  });
  if (!data) return null;
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

export interface ProfilePruneOptions {
  /** Accounts neither updated nor looked up since then are pruned. */
  before: Date;
  /** `--remove-headers`: only headers; else (`--prune-profiles`) avatars and headers. */
  headersOnly: boolean;
  /** `--include-follows`: also accounts that follow or are followed by a local account. */
  includeFollows: boolean;
  dryRun?: boolean;
}

/**
 * `cli media remove --prune-profiles` / `--remove-headers` (Mastodon's `tootctl media remove`):
 * drops our copies of the avatars and headers of remote accounts not updated (nor looked up by
 * WebFinger) since `before`, by default only of accounts no local account follows or is followed
 * by. The remote URLs stay, so the media proxy fetches an image again when somebody asks for it.
 * Returns how many accounts lost images (or would, with `dryRun`).
 */
export async function pruneRemoteProfileImages(core: Core, opts: ProfilePruneOptions): Promise<number> {
  const coll = collection(core.db, accounts);
  const kinds: ProfileImageKind[] = opts.headersOnly ? ['header'] : ['avatar', 'header'];
  const cursor = coll.find(
    {
      domain: { $ne: null },
      updatedAt: { $lt: opts.before },
      // Accounts never looked up by WebFinger count as old (the field is recent here).
      $and: [
        { $or: [{ lastWebfingeredAt: { $lt: opts.before } }, { lastWebfingeredAt: null }] },
        { $or: kinds.map((k) => ({ [k]: { $ne: null } })) },
      ],
    },
    { projection: { _id: 1, avatar: 1, header: 1 } },
  );
  let pruned = 0;
  for await (const account of cursor) {
    if (!opts.includeFollows) {
      const [followed, following] = await Promise.all([
        collection(core.db, follows).countDocuments({ targetAccountId: account._id }, { limit: 1 }),
        collection(core.db, follows).countDocuments({ accountId: account._id }, { limit: 1 }),
      ]);
      if (followed + following > 0) continue;
    }
    const images = kinds
      .map((k) => [k, account[k]] as const)
      .filter((e): e is [ProfileImageKind, StoredImage] => !!e[1]);
    if (images.length === 0) continue;
    pruned++;
    if (opts.dryRun) continue;
    for (const [kind, image] of images) {
      // Only the copy we read: one the media pipeline replaced meanwhile stays.
      const res = await coll.updateOne({ _id: account._id, [`${kind}.path`]: image.path }, { $set: { [kind]: null } });
      if (res.modifiedCount === 1) await deleteProfileImage(core, image);
    }
  }
  return pruned;
}
