// An import's CSV file as Mastodon's Form::Import checks it: size and row limits, the headers of
// each type (or none), the type the file's name and headers suggest, and each line as row data.
import type { ImportRowData, ImportType } from '../model/bulkImports.ts';
import { CsvSyntaxError, parseCsv } from './csv.ts';

/** Mastodon's limits (Form::Import). */
export const IMPORT_FILE_SIZE_LIMIT = 20 * 1024 * 1024;
export const IMPORT_ROWS_LIMIT = 20_000;

const EXPECTED_HEADERS: Record<ImportType, string[]> = {
  following: ['Account address', 'Show boosts', 'Notify on new posts', 'Languages'],
  blocking: ['Account address'],
  muting: ['Account address', 'Hide notifications'],
  domain_blocking: ['#domain'],
  bookmarks: ['#uri'],
  lists: ['List name', 'Account address'],
};
const KNOWN_FIRST_HEADERS = new Set(Object.values(EXPECTED_HEADERS).map((h) => h[0]));
const DEFAULT_HEADERS: Record<ImportType, string[]> = {
  following: ['Account address'],
  blocking: ['Account address'],
  muting: ['Account address'],
  domain_blocking: ['#domain'],
  bookmarks: ['#uri'],
  lists: ['List name', 'Account address'],
};
const ATTRIBUTE: Record<string, keyof ImportRowData> = {
  'Account address': 'acct',
  'Show boosts': 'show_reblogs',
  'Notify on new posts': 'notify',
  Languages: 'languages',
  'Hide notifications': 'hide_notifications',
  '#domain': 'domain',
  '#uri': 'uri',
  'List name': 'list_name',
};

/** A file refused, with the reason as Mastodon words it (`imports.errors.*`): shown on the form. */
export type ImportErrorKey =
  'too_large' | 'empty' | 'invalid_csv_file' | 'incompatible_type' | 'over_rows_processing_limit';

export class ImportFileError extends Error {
  readonly key: ImportErrorKey;
  readonly vars: Record<string, string | number>;
  constructor(key: ImportErrorKey, vars: Record<string, string | number> = {}) {
    super(key);
    this.key = key;
    this.vars = vars;
  }
}

/** ActiveModel::Type::Boolean over a CSV cell: empty is unset, "false"/"0"/"f"/"off" are false. */
function csvBoolean(value: string | undefined): boolean | null {
  if (value === undefined) return null;
  const s = value.trim().toLowerCase();
  if (s === '') return null;
  return !['0', 'f', 'false', 'off'].includes(s);
}

function convert(header: string, value: string | undefined): ImportRowData[keyof ImportRowData] {
  switch (header) {
    case 'Show boosts':
    case 'Notify on new posts':
    case 'Hide notifications':
      return csvBoolean(value);
    case 'Languages': {
      const langs = (value ?? '')
        .split(',')
        .map((l) => l.trim())
        .filter(Boolean);
      return langs.length ? langs : null;
    }
    case 'Account address':
      return (value ?? '').trim().replace(/^@/, '');
    case '#domain':
      return (value ?? '').trim().toLowerCase();
    default:
      return (value ?? '').trim();
  }
}

function guessedType(headers: string[], filename: string): ImportType | null {
  const name = (s: string) => filename.startsWith(s);
  if (headers.includes('Hide notifications') || name('mutes') || name('muted_accounts')) return 'muting';
  if (
    headers.includes('Show boosts') ||
    headers.includes('Notify on new posts') ||
    headers.includes('Languages') ||
    name('follows') ||
    name('following_accounts')
  )
    return 'following';
  if (name('blocks') || name('blocked_accounts')) return 'blocking';
  if (name('domain_blocks') || name('blocked_domains')) return 'domain_blocking';
  if (name('bookmarks')) return 'bookmarks';
  if (name('lists')) return 'lists';
  return null;
}

export interface ParsedImport {
  rows: ImportRowData[];
  likelyMismatched: boolean;
}

/** Checks a file as Mastodon does and turns its lines into rows of the chosen type. */
export function parseImportFile(type: ImportType, data: Buffer, filename: string): ParsedImport {
  if (data.length > IMPORT_FILE_SIZE_LIMIT) throw new ImportFileError('too_large');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data).replace(/^\uFEFF/, '');
  } catch {
    throw new ImportFileError('invalid_csv_file', { error: 'Invalid byte sequence in UTF-8' });
  }
  let table: string[][];
  try {
    table = parseCsv(text, IMPORT_ROWS_LIMIT + 2);
  } catch (err) {
    if (err instanceof CsvSyntaxError) throw new ImportFileError('invalid_csv_file', { error: err.message });
    throw err;
  }
  if (table.length === 0) throw new ImportFileError('empty');
  const fileHeaders = table[0].map((h) => h.trim());
  const hasHeaders = KNOWN_FIRST_HEADERS.has(fileHeaders[0]);
  const headers = hasHeaders ? fileHeaders : DEFAULT_HEADERS[type];
  const body = hasHeaders ? table.slice(1) : table;
  if (!DEFAULT_HEADERS[type].every((h) => headers.includes(h))) throw new ImportFileError('incompatible_type');
  if (body.length > IMPORT_ROWS_LIMIT)
    throw new ImportFileError('over_rows_processing_limit', { count: IMPORT_ROWS_LIMIT });
  const wanted = EXPECTED_HEADERS[type];
  const rows = body.map((line) => {
    const row: ImportRowData = {};
    headers.forEach((header, i) => {
      if (!wanted.includes(header)) return;
      (row as Record<string, unknown>)[ATTRIBUTE[header]] = convert(header, line[i]);
    });
    return row;
  });
  const guess = guessedType(hasHeaders ? fileHeaders : [], filename);
  return { rows, likelyMismatched: guess !== null && guess !== type };
}
