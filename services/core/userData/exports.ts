// The CSV exports of /settings/export, in Mastodon's formats (its Export model): following (with
// boosts, notify and languages), lists, blocks, mutes (with hide notifications), blocked domains
// and bookmarks, newest first where Mastodon orders them. Local accounts are named
// `user@LOCAL_DOMAIN`, so the file imports unchanged on another server.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import type { Filter } from 'mongodb';
import { collection, type CollectionDef } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { blocks } from '../model/blocks.ts';
import { mutes } from '../model/mutes.ts';
import { bookmarks } from '../model/bookmarks.ts';
import { statuses } from '../model/statuses.ts';
import { listMembers, lists } from '../model/lists.ts';
import { accountDomainBlocks } from '../model/accountDomainBlocks.ts';
import { csvLine } from './csv.ts';

export const EXPORT_TYPES = ['follows', 'lists', 'blocks', 'mutes', 'domain_blocks', 'bookmarks'] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];

export function exportAcct(core: Core, account: Pick<AccountDoc, 'username' | 'domain'>): string {
  return `${account.username}@${account.domain ?? core.config.localDomain}`;
}

async function acctsById(core: Core, ids: Id[]): Promise<Map<string, string>> {
  const found = await collection(core.db, accounts)
    .find({ _id: { $in: ids } }, { projection: { _id: 1, username: 1, domain: 1 } })
    .toArray();
  return new Map(found.map((a) => [String(a._id), exportAcct(core, a)]));
}

/** Reads in pages so a large account never holds more than one page of relations at once. */
async function* paged<T extends { _id: Id }>(
  read: (before: Id | null) => Promise<T[]>,
): AsyncGenerator<T[], void, undefined> {
  let before: Id | null = null;
  for (;;) {
    const page = await read(before);
    if (page.length === 0) return;
    yield page;
    before = page[page.length - 1]._id;
  }
}

const PAGE = 1000;

/** An account's documents of one collection (follows, mutes, …), newest first, a page at a time. */
export function ownedPages<T extends { _id: Id; accountId: Id }>(
  core: Core,
  def: CollectionDef<T>,
  accountId: Id,
): AsyncGenerator<T[], void, undefined> {
  return paged(async (before) => {
    const filter = { accountId, ...(before === null ? {} : { _id: { $lt: before } }) } as Filter<T>;
    return (await collection(core.db, def).find(filter).sort({ _id: -1 }).limit(PAGE).toArray()) as T[];
  });
}

/** The rows of a relation to accounts (follows, mutes, blocks): the account's address first. */
async function accountRelationsCsv<T extends { _id: Id; accountId: Id; targetAccountId: Id }>(
  core: Core,
  def: CollectionDef<T>,
  accountId: Id,
  header: string,
  rest: (doc: T) => (string | boolean | null)[],
): Promise<string> {
  let out = header;
  for await (const page of ownedPages(core, def, accountId)) {
    const names = await acctsById(
      core,
      page.map((x) => x.targetAccountId),
    );
    for (const x of page) {
      const acct = names.get(String(x.targetAccountId));
      if (acct) out += csvLine([acct, ...rest(x)]);
    }
  }
  return out;
}

function followsCsv(core: Core, accountId: Id): Promise<string> {
  const header = csvLine(['Account address', 'Show boosts', 'Notify on new posts', 'Languages']);
  return accountRelationsCsv(core, follows, accountId, header, (f) => [
    f.showReblogs,
    f.notify,
    f.languages?.join(', ') ?? null,
  ]);
}

function mutesCsv(core: Core, accountId: Id): Promise<string> {
  const header = csvLine(['Account address', 'Hide notifications']);
  return accountRelationsCsv(core, mutes, accountId, header, (m) => [m.hideNotifications]);
}

function blocksCsv(core: Core, accountId: Id): Promise<string> {
  return accountRelationsCsv(core, blocks, accountId, '', () => []);
}

async function domainBlocksCsv(core: Core, accountId: Id): Promise<string> {
  let out = '';
  for await (const page of ownedPages(core, accountDomainBlocks, accountId))
    for (const d of page) out += csvLine([d.domain]);
  return out;
}

/** The ActivityPub ids of the records' statuses that are not deleted, in the records' order. */
export async function liveStatusUris(core: Core, records: readonly { statusId: Id }[]): Promise<string[]> {
  const found = await collection(core.db, statuses)
    .find({ _id: { $in: records.map((x) => x.statusId) }, deletedAt: null }, { projection: { _id: 1, uri: 1 } })
    .toArray();
  const uris = new Map(found.map((s) => [s._id, s.uri]));
  return records.map((x) => uris.get(x.statusId)).filter((u): u is string => u !== undefined);
}

async function bookmarksCsv(core: Core, accountId: Id): Promise<string> {
  let out = '';
  for await (const page of ownedPages(core, bookmarks, accountId)) {
    for (const uri of await liveStatusUris(core, page)) out += csvLine([uri]);
  }
  return out;
}

async function listsCsv(core: Core, accountId: Id): Promise<string> {
  let out = '';
  const owned = await collection(core.db, lists).find({ accountId }).sort({ _id: 1 }).toArray();
  for (const list of owned) {
    const members = await collection(core.db, listMembers).find({ listId: list._id }).sort({ _id: 1 }).toArray();
    const names = await acctsById(
      core,
      members.map((m) => m.accountId),
    );
    for (const m of members) {
      const acct = names.get(String(m.accountId));
      if (acct) out += csvLine([list.title, acct]);
    }
  }
  return out;
}

export function exportCsv(core: Core, accountId: Id, type: ExportType): Promise<string> {
  switch (type) {
    case 'follows':
      return followsCsv(core, accountId);
    case 'lists':
      return listsCsv(core, accountId);
    case 'blocks':
      return blocksCsv(core, accountId);
    case 'mutes':
      return mutesCsv(core, accountId);
    case 'domain_blocks':
      return domainBlocksCsv(core, accountId);
    case 'bookmarks':
      return bookmarksCsv(core, accountId);
  }
}

export type ExportCounts = Record<ExportType | 'followers' | 'statuses', number>;

/** What the export page shows beside each file. */
export async function exportCounts(core: Core, account: AccountDoc): Promise<ExportCounts> {
  const accountId = account._id;
  const [following, followers, ownedLists, blocked, muted, domains, marked] = await Promise.all([
    collection(core.db, follows).countDocuments({ accountId }),
    collection(core.db, follows).countDocuments({ targetAccountId: accountId }),
    collection(core.db, lists).countDocuments({ accountId }),
    collection(core.db, blocks).countDocuments({ accountId }),
    collection(core.db, mutes).countDocuments({ accountId }),
    collection(core.db, accountDomainBlocks).countDocuments({ accountId }),
    collection(core.db, bookmarks).countDocuments({ accountId }),
  ]);
  return {
    follows: following,
    followers,
    lists: ownedLists,
    blocks: blocked,
    mutes: muted,
    domain_blocks: domains,
    bookmarks: marked,
    statuses: account.statusesCount,
  };
}
