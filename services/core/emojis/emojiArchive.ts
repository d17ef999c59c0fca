// An archive of custom emojis imported at once (tootctl emoji import; the admin page's import): a
// .tar.gz of PNG and GIF files, each named by its shortcode.
import { basename, extname } from 'node:path';
import type { Core } from '../context.ts';
import { EMOJI_SIZE_LIMIT, EmojiError, importCustomEmoji } from './emojis.ts';
import { readTarGz } from './tarArchive.ts';

/** What an emoji archive may inflate to (emoji packs are a few MB; this bounds a gzip bomb). */
export const EMOJI_ARCHIVE_MAX_BYTES = 256 * 1024 * 1024;

export interface EmojiArchiveOptions {
  prefix?: string;
  suffix?: string;
  overwrite: boolean;
  category: string | null;
  visibleInPicker: boolean;
}

export interface EmojiArchiveOutcome {
  imported: number;
  skipped: number;
  /** The files that were refused, with why (as tootctl prints them). */
  failed: Array<{ file: string; reason: string }>;
}

/** Imports every emoji of the archive; throws TarError when the archive itself is unreadable. */
export async function importEmojiArchive(
  core: Core,
  gz: Buffer,
  opts: EmojiArchiveOptions,
): Promise<EmojiArchiveOutcome> {
  const entries = readTarGz(gz, { maxBytes: EMOJI_ARCHIVE_MAX_BYTES, maxFileBytes: EMOJI_SIZE_LIMIT });
  const outcome: EmojiArchiveOutcome = { imported: 0, skipped: 0, failed: [] };
  for (const entry of entries) {
    // As tootctl: PNG and GIF files, named by their file name, macOS "._" shadow files skipped.
    if (!/\.(png|gif)$/.test(entry.name)) continue;
    const name = basename(entry.name, extname(entry.name));
    if (name.startsWith('._')) continue;
    try {
      if (!entry.data) throw new EmojiError('Image must be less than 256 KB');
      const result = await importCustomEmoji(core, {
        shortcode: `${opts.prefix ?? ''}${name}${opts.suffix ?? ''}`,
        data: entry.data,
        category: opts.category,
        visibleInPicker: opts.visibleInPicker,
        overwrite: opts.overwrite,
      });
      outcome[result]++;
    } catch (err) {
      if (!(err instanceof EmojiError)) throw err;
      outcome.failed.push({ file: entry.name, reason: err.message });
    }
  }
  return outcome;
}
