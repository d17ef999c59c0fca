// The .tar.gz reader behind `cli emoji import`: ustar names with prefixes, pax paths, files over
// the size limit reported without data, and the bounds that stop hostile archives.
import { gzipSync } from 'node:zlib';
import { readTarGz, TarError } from '../../../services/core/emojis/tarArchive.ts';

function header(name: string, size: number, type = '0', prefix = ''): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100, 'ascii');
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  h.write(type, 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

function entry(name: string, data: Buffer, type = '0', prefix = ''): Buffer {
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([header(name, data.length, type, prefix), data, pad]);
}

const archive = (...entries: Buffer[]) => gzipSync(Buffer.concat([...entries, Buffer.alloc(1024)]));
const limits = { maxBytes: 1 << 20, maxFileBytes: 100 };

test('reads regular files with ustar prefixes and pax paths, skipping directories', () => {
  const record = ' path=pack/a-very-long-name.png\n';
  const pax = Buffer.from(`${record.length + 2}${record}`); // the length counts its own two digits
  const files = readTarGz(
    archive(
      entry('pack/', Buffer.alloc(0), '5'),
      entry('one.png', Buffer.from('1'), '0', 'pack'),
      entry('PaxHeader', pax, 'x'),
      entry('ignored-short-name.png', Buffer.from('22')),
      entry('big.gif', Buffer.alloc(101)),
    ),
    limits,
  );
  expect(files.map((f) => [f.name, f.size, f.data?.toString() ?? null])).toEqual([
    ['pack/one.png', 1, '1'],
    ['pack/a-very-long-name.png', 2, '22'],
    ['big.gif', 101, null],
  ]);
});

test('refuses what is not a tar.gz, a damaged header and an archive inflating past the limit', () => {
  expect(() => readTarGz(Buffer.from('plain text'), limits)).toThrow(new TarError('not a gzip file'));
  const damaged = entry('x.png', Buffer.from('1'));
  damaged[0] = 'y'.charCodeAt(0);
  expect(() => readTarGz(archive(damaged), limits)).toThrow(/bad checksum/);
  expect(() => readTarGz(gzipSync(Buffer.alloc(2 << 20)), limits)).toThrow(/larger than/);
  const truncated = gzipSync(header('x.png', 4096));
  expect(() => readTarGz(truncated, limits)).toThrow(/truncated/);
});
