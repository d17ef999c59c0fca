// CSV as Ruby's CSV library writes and reads it (Mastodon's export and import files): comma
// separated, a field quoted when it holds a comma, quote or line break, quotes doubled, rows ended
// by "\n"; reading accepts "\r\n" and skips blank lines.
export type CsvValue = string | boolean | null | undefined;

function cell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'boolean' ? String(value) : value;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(values: CsvValue[]): string {
  return `${values.map(cell).join(',')}\n`;
}

export class CsvSyntaxError extends Error {}

/** Every row of `text` (blank lines left out); a malformed quote throws CsvSyntaxError. */
export function parseCsv(text: string, maxRows = Infinity): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let line = 1;
  let quoted = false;
  const endRow = () => {
    row.push(field);
    field = '';
    if (!(row.length === 1 && row[0] === '')) rows.push(row);
    row = [];
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r')
          throw new CsvSyntaxError(`Any value after quoted field isn't allowed in line ${line}.`);
        continue;
      }
      if (c === '\n') line++;
      field += c;
      i++;
      continue;
    }
    if (c === '"') {
      if (field !== '') throw new CsvSyntaxError(`Illegal quoting in line ${line}.`);
      quoted = true;
      i++;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (c === '\r' || c === '\n') {
      endRow();
      if (rows.length > maxRows) return rows;
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      line++;
    } else {
      field += c;
      i++;
    }
  }
  if (quoted) throw new CsvSyntaxError(`Unclosed quoted field in line ${line}.`);
  if (field !== '' || row.length > 0) endRow();
  return rows;
}
