// Reading the files of a .tar.gz (as `tootctl emoji import` does): POSIX ustar and GNU tar
// headers, with GNU long names (`L`) and pax `path` records (`x`); other entry types are passed
// over. Bounded: the archive is inflated up to `maxBytes`, and a file larger than `maxFileBytes`
// is reported without its data, so a hostile archive costs at most that much memory.
import { gunzipSync } from 'node:zlib';

export interface TarFile {
  /** The path inside the archive. */
  name: string;
  size: number;
  /** null when the file exceeds `maxFileBytes`. */
  data: Buffer | null;
}

export class TarError extends Error {}

const BLOCK = 512;

function text(block: Buffer, start: number, length: number): string {
  const raw = block.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? raw.length : end).toString('utf8');
}

function octal(block: Buffer, start: number, length: number): number {
  const field = block.subarray(start, start + length);
  // GNU base-256 for sizes of 8 GiB and more: never a file an emoji import takes.
  if (field[0] & 0x80) throw new TarError('archive entry too large');
  const value = text(block, start, length).trim();
  if (value === '') return 0;
  if (!/^[0-7]+$/.test(value)) throw new TarError('not a tar archive (bad header)');
  return parseInt(value, 8);
}

function checksumOk(block: Buffer): boolean {
  const stored = octal(block, 148, 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i];
  return sum === stored;
}

/** The `path` of a pax extended header, if it has one. */
function paxPath(data: Buffer): string | null {
  let at = 0;
  let path: string | null = null;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) break;
    const length = Number(data.subarray(at, space).toString('ascii'));
    if (!Number.isInteger(length) || length <= 0) break;
    const record = data.subarray(space + 1, at + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0 && record.slice(0, eq) === 'path') path = record.slice(eq + 1);
    at += length;
  }
  return path;
}

/** The regular files of a gzip-compressed tar archive, in archive order. */
export function readTarGz(gz: Buffer, opts: { maxBytes: number; maxFileBytes: number }): TarFile[] {
  let tar: Buffer;
  try {
    tar = gunzipSync(gz, { maxOutputLength: opts.maxBytes });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
      throw new TarError(`archive larger than ${opts.maxBytes} bytes once inflated`);
    throw new TarError('not a gzip file');
  }
  const files: TarFile[] = [];
  let longName: string | null = null;
  for (let at = 0; at + BLOCK <= tar.length;) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break; // end of archive
    if (!checksumOk(header)) throw new TarError('not a tar archive (bad checksum)');
    const size = octal(header, 124, 12);
    const type = String.fromCharCode(header[156] || 0x30);
    const dataStart = at + BLOCK;
    if (dataStart + size > tar.length) throw new TarError('truncated tar archive');
    const data = tar.subarray(dataStart, dataStart + size);
    at = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'L') {
      longName = text(data, 0, data.length);
      continue;
    }
    if (type === 'x') {
      longName = paxPath(data) ?? longName;
      continue;
    }
    let name = longName;
    longName = null;
    if (name === null) {
      const prefix = header.subarray(257, 262).toString('ascii') === 'ustar' ? text(header, 345, 155) : '';
      const base = text(header, 0, 100);
      name = prefix ? `${prefix}/${base}` : base;
    }
    if (type !== '0' && type !== '7') continue; // directories, links, devices
    files.push({ name, size, data: size > opts.maxFileBytes ? null : Buffer.from(data) });
  }
  return files;
}
