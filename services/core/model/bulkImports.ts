// CSV imports of /settings/imports (Mastodon's BulkImport and BulkImportRow): the import with its
// progress, and one row per line of the file still to be processed (a row is removed once done).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export const IMPORT_TYPES = ['following', 'blocking', 'muting', 'domain_blocking', 'bookmarks', 'lists'] as const;
export type ImportType = (typeof IMPORT_TYPES)[number];
export type ImportState = 'unconfirmed' | 'scheduled' | 'in_progress' | 'finished';

export interface BulkImportDoc {
  _id: Id;
  accountId: Id;
  type: ImportType;
  overwrite: boolean;
  state: ImportState;
  originalFilename: string;
  /** The file looks like another type of export than the one chosen (a warning on confirmation). */
  likelyMismatched: boolean;
  totalItems: number;
  processedItems: number;
  importedItems: number;
  /** Whether the overwrite step (removing what the file does not list) ran. */
  prepared: boolean;
  /** A scheduler process holds the import until then. */
  leaseUntil: Date | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface ImportRowData {
  acct?: string;
  show_reblogs?: boolean | null;
  notify?: boolean | null;
  languages?: string[] | null;
  hide_notifications?: boolean | null;
  domain?: string;
  uri?: string;
  list_name?: string;
}

export interface BulkImportRowDoc {
  _id: Id;
  importId: Id;
  data: ImportRowData;
}

export const bulkImports = defineCollection<BulkImportDoc>('bulk_imports', [
  { key: { accountId: 1, _id: -1 }, name: 'account' },
  { key: { state: 1, leaseUntil: 1 }, name: 'state' },
]);
export const bulkImportRows = defineCollection<BulkImportRowDoc>('bulk_import_rows', [
  { key: { importId: 1, _id: 1 }, name: 'import' },
]);
