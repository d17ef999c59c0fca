// CSV imports (Mastodon's Form::Import and BulkImportService): a file is checked (importFile.ts)
// and stored as rows (unconfirmed), confirmed or cancelled by its owner, then processed by the
// scheduler's `bulk-imports` job a batch at a time (importProcessing.ts), so progress shows on the page.
import type { Core } from '../context.ts';
import { nextSerialId, nextSerialIds, type Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import {
  bulkImportRows,
  bulkImports,
  type BulkImportDoc,
  type BulkImportRowDoc,
  type ImportType,
} from '../model/bulkImports.ts';
import { parseImportFile } from './importFile.ts';

/** Stores a checked file as an unconfirmed import of `account`. */
export async function createImport(
  core: Core,
  account: AccountDoc,
  input: { type: ImportType; overwrite: boolean; data: Buffer; filename: string },
): Promise<BulkImportDoc> {
  const parsed = parseImportFile(input.type, input.data, input.filename);
  const doc: BulkImportDoc = {
    _id: await nextSerialId(core.db, 'bulk_imports'),
    accountId: account._id,
    type: input.type,
    overwrite: input.overwrite,
    state: 'unconfirmed',
    originalFilename: input.filename.slice(0, 255),
    likelyMismatched: parsed.likelyMismatched,
    totalItems: parsed.rows.length,
    processedItems: 0,
    importedItems: 0,
    prepared: false,
    leaseUntil: null,
    createdAt: new Date(),
    finishedAt: null,
  };
  await collection(core.db, bulkImports).insertOne(doc);
  const ids = await nextSerialIds(core.db, 'bulk_import_rows', parsed.rows.length);
  const rows: BulkImportRowDoc[] = parsed.rows.map((data, i) => ({ _id: ids[i], importId: doc._id, data }));
  for (let i = 0; i < rows.length; i += 1000)
    await collection(core.db, bulkImportRows).insertMany(rows.slice(i, i + 1000));
  return doc;
}

export async function listImports(core: Core, accountId: Id, limit = 20): Promise<BulkImportDoc[]> {
  return collection(core.db, bulkImports).find({ accountId }).sort({ _id: -1 }).limit(limit).toArray();
}

export async function ownImport(core: Core, accountId: Id, id: Id | null): Promise<BulkImportDoc | null> {
  return id === null ? null : collection(core.db, bulkImports).findOne({ _id: id, accountId });
}

/** The owner confirmed: the scheduler takes it from here. */
export async function confirmImport(core: Core, doc: BulkImportDoc): Promise<boolean> {
  const res = await collection(core.db, bulkImports).updateOne(
    { _id: doc._id, state: 'unconfirmed' },
    {
      $set: {
        state: doc.totalItems === 0 ? 'finished' : 'scheduled',
        finishedAt: doc.totalItems === 0 ? new Date() : null,
      },
    },
  );
  return res.modifiedCount === 1;
}

export async function cancelImport(core: Core, doc: BulkImportDoc): Promise<boolean> {
  if (doc.state !== 'unconfirmed') return false;
  await collection(core.db, bulkImportRows).deleteMany({ importId: doc._id });
  await collection(core.db, bulkImports).deleteOne({ _id: doc._id, state: 'unconfirmed' });
  return true;
}
