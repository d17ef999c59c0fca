// The archive of an account (Mastodon's BackupService): a zip with actor.json, outbox.json (a
// Create for each post, as ActivityPub JSON), likes.json, bookmarks.json, the avatar and header
// and the media files of the posts. Requested at most once in 7 days; the scheduler's `archives`
// job builds it, stores it with the media, e-mails the owner, and removes it after 7 days.
import { PassThrough } from 'node:stream';
import archiver from 'archiver';
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { users, type UserDoc } from '../model/users.ts';
import { statuses } from '../model/statuses.ts';
import { favourites } from '../model/favourites.ts';
import { bookmarks } from '../model/bookmarks.ts';
import { mediaAttachments } from '../model/media.ts';
import { backups, type BackupDoc } from '../model/backups.ts';
import { AS_CONTEXT } from '../activitypub/render/context.ts';
import { renderLocalActor, renderStatusObject } from '../activitypub/render/load.ts';
import { renderCreate } from '../activitypub/render/activities.ts';
import { storageFor } from '../media/storage.ts';
import { mailRequestedEvent } from '../mail/request.ts';
import { randomBytes } from 'node:crypto';
import { liveStatusUris, ownedPages } from './exports.ts';

/** One archive per 7 days (the "once a week"), kept for 7 days. */
export const ARCHIVE_INTERVAL_MS = 7 * 86_400_000;
export const ARCHIVE_RETENTION_MS = 7 * 86_400_000;
const LEASE_MS = 30 * 60_000;
const PAGE = 500;

export type ArchiveRequest = { ok: true; backup: BackupDoc } | { ok: false; nextAllowedAt: Date };

/** When the next archive may be requested, or null when now. */
export async function nextArchiveAllowedAt(core: Core, userId: Id, now = new Date()): Promise<Date | null> {
  const last = await collection(core.db, backups).findOne({ userId }, { sort: { _id: -1 } });
  if (!last) return null;
  const next = new Date(last.createdAt.getTime() + ARCHIVE_INTERVAL_MS);
  return next > now ? next : null;
}

export async function requestArchive(core: Core, user: UserDoc): Promise<ArchiveRequest> {
  const nextAllowedAt = await nextArchiveAllowedAt(core, user._id);
  if (nextAllowedAt) return { ok: false, nextAllowedAt };
  const backup: BackupDoc = {
    _id: await nextSerialId(core.db, 'backups'),
    userId: user._id,
    accountId: user.accountId,
    state: 'pending',
    storageKey: null,
    size: null,
    leaseUntil: null,
    createdAt: new Date(),
    processedAt: null,
  };
  await collection(core.db, backups).insertOne(backup);
  return { ok: true, backup };
}

export async function listArchives(core: Core, userId: Id): Promise<BackupDoc[]> {
  return collection(core.db, backups).find({ userId }).sort({ _id: -1 }).limit(5).toArray();
}

export async function ownArchive(core: Core, userId: Id, id: Id | null): Promise<BackupDoc | null> {
  return id === null ? null : collection(core.db, backups).findOne({ _id: id, userId, state: 'done' });
}

function orderedCollection(id: string, items: unknown[]): Record<string, unknown> {
  return { '@context': AS_CONTEXT, id, type: 'OrderedCollection', totalItems: items.length, orderedItems: items };
}

function extensionOf(key: string): string {
  const m = /\.([a-z0-9]{1,5})$/i.exec(key);
  return m ? m[1] : 'bin';
}

/** The zip of an account, in memory (its media included). */
export async function buildArchive(core: Core, account: AccountDoc): Promise<Buffer> {
  const storage = storageFor(core);
  const zip = archiver('zip', { zlib: { level: 6 } });
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    sink.on('end', resolve);
    zip.on('error', reject);
  });
  zip.pipe(sink);

  const json = (name: string, value: unknown) => zip.append(JSON.stringify(value), { name });
  const file = async (name: string, key: string | null | undefined) => {
    if (!key) return;
    const data = await storage.get(key).catch(() => null);
    if (data) zip.append(data, { name });
  };

  json('actor.json', await renderLocalActor(core, account));
  if (account.avatar) await file(`avatar.${extensionOf(account.avatar.path)}`, account.avatar.path);
  if (account.header) await file(`header.${extensionOf(account.header.path)}`, account.header.path);

  const activities: unknown[] = [];
  let after: Id | null = null;
  for (;;) {
    const page = await collection(core.db, statuses)
      .find({
        accountId: account._id,
        deletedAt: null,
        reblogOfId: null,
        ...(after === null ? {} : { _id: { $gt: after } }),
      })
      .sort({ _id: 1 })
      .limit(PAGE)
      .toArray();
    if (page.length === 0) break;
    after = page[page.length - 1]._id;
    for (const status of page) {
      const note = await renderStatusObject(core, status, account);
      activities.push(renderCreate(note, `${status.uri}/activity`));
    }
    const media = await collection(core.db, mediaAttachments)
      .find({ statusId: { $in: page.map((s) => s._id) } })
      .toArray();
    for (const m of media) await file(m.files.original ?? '', m.files.original);
  }
  json('outbox.json', orderedCollection('outbox.json', activities));

  const uris = async (coll: typeof favourites | typeof bookmarks): Promise<string[]> => {
    const out: string[] = [];
    for await (const page of ownedPages(core, coll, account._id)) out.push(...(await liveStatusUris(core, page)));
    return out;
  };
  json('likes.json', orderedCollection('likes.json', await uris(favourites)));
  json('bookmarks.json', orderedCollection('bookmarks.json', await uris(bookmarks)));

  await zip.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** The scheduler job: builds one pending archive, and removes expired ones. */
export async function processArchives(core: Core): Promise<number> {
  const now = new Date();
  const B = collection(core.db, backups);
  let handled = await removeExpiredArchives(core, now);
  const claimed = await B.findOneAndUpdate(
    {
      state: { $in: ['pending', 'processing'] },
      $or: [{ leaseUntil: null }, { leaseUntil: { $lt: now } }],
    },
    { $set: { state: 'processing', leaseUntil: new Date(now.getTime() + LEASE_MS) } },
    { sort: { _id: 1 }, returnDocument: 'after' },
  );
  if (!claimed) return handled;
  handled++;
  const [account, user] = await Promise.all([
    collection(core.db, accounts).findOne({ _id: claimed.accountId }),
    collection(core.db, users).findOne({ _id: claimed.userId }),
  ]);
  if (!account || !user || account.suspendedAt) {
    await B.updateOne({ _id: claimed._id }, { $set: { state: 'failed', processedAt: new Date(), leaseUntil: null } });
    return handled;
  }
  const zip = await buildArchive(core, account);
  const stamp = now
    .toISOString()
    .replace(/[^0-9]/g, '')
    .slice(0, 14);
  const key = `backups/${claimed._id}/archive-${stamp}-${randomBytes(8).toString('hex')}.zip`;
  await storageFor(core).put(key, zip, 'application/zip');
  const processedAt = new Date();
  const link = `${core.config.baseUrl}/settings/export`;
  await core.outbox.write(
    [
      mailRequestedEvent(
        {
          to: user.email,
          template: 'backup_ready',
          key: String(user._id),
          variables: { instance: core.config.localDomain, username: account.username, link },
        },
        { collection: backups.name, filter: { _id: claimed._id, state: 'done' }, expect: 'exists' },
      ),
    ],
    () =>
      B.updateOne(
        { _id: claimed._id },
        { $set: { state: 'done', storageKey: key, size: zip.length, processedAt, leaseUntil: null } },
      ),
  );
  return handled;
}

async function removeExpiredArchives(core: Core, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - ARCHIVE_RETENTION_MS);
  const expired = await collection(core.db, backups)
    .find({ state: 'done', processedAt: { $lt: cutoff } })
    .limit(20)
    .toArray();
  for (const b of expired) {
    if (b.storageKey) await storageFor(core).delete(b.storageKey);
    await collection(core.db, backups).updateOne({ _id: b._id }, { $set: { state: 'failed', storageKey: null } });
  }
  return expired.length;
}

/** Whether a finished archive can still be downloaded. */
export function archiveAvailable(b: BackupDoc, now = new Date()): boolean {
  return (
    b.state === 'done' &&
    b.storageKey !== null &&
    b.processedAt !== null &&
    b.processedAt.getTime() > now.getTime() - ARCHIVE_RETENTION_MS
  );
}
