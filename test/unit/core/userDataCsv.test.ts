// The CSV reader and writer of the data pages, and the import checks, over files in the exact
// format Mastodon exports (test/fixtures/mastodon-exports) and broken ones.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvLine, parseCsv, CsvSyntaxError } from '../../../services/core/userData/csv.ts';
import { ImportFileError, parseImportFile, IMPORT_ROWS_LIMIT } from '../../../services/core/userData/importFile.ts';

const fixture = (name: string): Buffer =>
  readFileSync(join(__dirname, '..', '..', 'fixtures', 'mastodon-exports', name));

function refusal(fn: () => unknown): { key: string; vars: Record<string, string | number> } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ImportFileError) return { key: err.key, vars: err.vars };
    throw err;
  }
  throw new Error('not refused');
}

describe('CSV as Ruby writes and reads it', () => {
  it('quotes only what needs quoting, writes booleans and nil as Ruby does', () => {
    expect(csvLine(['a@b', true, false, null])).toBe('a@b,true,false,\n');
    expect(csvLine(['en, de', 'say "hi"', 'two\nlines'])).toBe('"en, de","say ""hi""","two\nlines"\n');
  });

  it('reads quoted fields, CRLF and blank lines, and what it writes', () => {
    expect(parseCsv('a,"b, c"\r\n\r\n"d ""e""",\n')).toEqual([
      ['a', 'b, c'],
      ['d "e"', ''],
    ]);
    const row = ['x', 'y, z', 'q"'];
    expect(parseCsv(csvLine(row))).toEqual([row]);
  });

  it('refuses malformed quoting with the line', () => {
    expect(() => parseCsv('a,b\n"open')).toThrow(new CsvSyntaxError('Unclosed quoted field in line 2.'));
    expect(() => parseCsv('a"b')).toThrow('Illegal quoting in line 1.');
    expect(() => parseCsv('"a"b')).toThrow("Any value after quoted field isn't allowed in line 1.");
  });
});

describe('import files (Mastodon Form::Import)', () => {
  it('reads each kind of Mastodon export', () => {
    expect(parseImportFile('following', fixture('following_accounts.csv'), 'following_accounts.csv')).toEqual({
      likelyMismatched: false,
      rows: [
        { acct: 'Gargron@mastodon.social', show_reblogs: true, notify: false, languages: null },
        { acct: 'alice@example.com', show_reblogs: false, notify: true, languages: ['en', 'fr'] },
        { acct: 'bob@example.com', show_reblogs: true, notify: false, languages: null },
      ],
    });
    expect(parseImportFile('muting', fixture('muted_accounts.csv'), 'muted_accounts.csv').rows).toEqual([
      { acct: 'spammer@example.net', hide_notifications: true },
      { acct: 'noisy@example.org', hide_notifications: false },
    ]);
    expect(parseImportFile('blocking', fixture('blocked_accounts.csv'), 'blocked_accounts.csv').rows).toEqual([
      { acct: 'troll@example.net' },
      { acct: 'other@example.org' },
    ]);
    expect(parseImportFile('domain_blocking', fixture('blocked_domains.csv'), 'blocked_domains.csv').rows).toEqual([
      { domain: 'spam.example' },
      { domain: 'bad.example' },
    ]);
    expect(parseImportFile('bookmarks', fixture('bookmarks.csv'), 'bookmarks.csv').rows).toEqual([
      { uri: 'https://mastodon.social/users/Gargron/statuses/1' },
      { uri: 'https://example.com/@alice/2' },
    ]);
    expect(parseImportFile('lists', fixture('lists.csv'), 'lists.csv').rows).toEqual([
      { list_name: 'Friends', acct: 'alice@example.com' },
      { list_name: 'Friends', acct: 'bob@example.com' },
      { list_name: 'Work, mostly', acct: 'bob@example.com' },
    ]);
  });

  it('a follows file imported as blocks works but is flagged as likely mismatched', () => {
    const parsed = parseImportFile('blocking', fixture('following_accounts.csv'), 'following_accounts.csv');
    expect(parsed.likelyMismatched).toBe(true);
    expect(parsed.rows[0]).toEqual({ acct: 'Gargron@mastodon.social' });
    // A file without headers (an old Mastodon export) takes the first column.
    expect(parseImportFile('following', Buffer.from('@a@example.com\n'), 'x.csv').rows).toEqual([
      { acct: 'a@example.com' },
    ]);
  });

  it('refuses what Mastodon refuses, with its reasons', () => {
    expect(refusal(() => parseImportFile('following', Buffer.from('\n'), 'x.csv'))).toEqual({ key: 'empty', vars: {} });
    expect(refusal(() => parseImportFile('domain_blocking', fixture('muted_accounts.csv'), 'x.csv')).key).toBe(
      'incompatible_type',
    );
    expect(refusal(() => parseImportFile('lists', Buffer.from('a,"b\n'), 'x.csv'))).toEqual({
      key: 'invalid_csv_file',
      vars: { error: 'Unclosed quoted field in line 2.' },
    });
    expect(refusal(() => parseImportFile('blocking', Buffer.from([0x61, 0xff, 0x0a]), 'x.csv')).key).toBe(
      'invalid_csv_file',
    );
    const many = Buffer.from(Array.from({ length: IMPORT_ROWS_LIMIT + 1 }, (_, i) => `u${i}@example.com`).join('\n'));
    expect(refusal(() => parseImportFile('blocking', many, 'x.csv'))).toEqual({
      key: 'over_rows_processing_limit',
      vars: { count: IMPORT_ROWS_LIMIT },
    });
    expect(refusal(() => parseImportFile('blocking', Buffer.alloc(20 * 1024 * 1024 + 1, 0x61), 'x.csv')).key).toBe(
      'too_large',
    );
  });
});
