// `cli emoji`: custom emoji, as Mastodon's tootctl emoji: add one, modify one, import an archive of
// them, remove one.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  addCustomEmoji,
  importCustomEmoji,
  EMOJI_SIZE_LIMIT,
  allLocalEmojis,
  modifyCustomEmoji,
  removeCustomEmoji,
  EmojiError,
} from '../core/emojis/emojis.ts';
import { CliError } from './commands.ts';
import { readTarGz, TarError } from '../core/emojis/tarArchive.ts';
import { basename, extname } from 'node:path';
import { type SiteCommand, friendly } from './siteCommands.ts';

/** What an emoji archive may inflate to (emoji packs are a few MB; this bounds a gzip bomb). */
const EMOJI_ARCHIVE_MAX_BYTES = 256 * 1024 * 1024;
export function emojiCommand(action: string | undefined, rest: string[]): SiteCommand {
  if (action === 'list') {
    return async (core, out) => {
      for (const e of await allLocalEmojis(core))
        out(
          `${e.shortcode}\t${e.category ?? '-'}\t${e.disabled ? 'disabled' : 'enabled'}\t${e.visibleInPicker ? 'listed' : 'unlisted'}`,
        );
    };
  }
  if (action === 'add') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { category: { type: 'string' }, unlisted: { type: 'boolean' } },
    });
    if (positionals.length !== 2) throw new CliError('emoji add needs SHORTCODE and FILE');
    const [shortcode, file] = positionals;
    return async (core, out) => {
      const data = await readFile(file).catch(() => {
        throw new CliError(`Cannot read ${file}`);
      });
      await friendly(
        addCustomEmoji(core, { shortcode, data, category: values.category ?? null, visibleInPicker: !values.unlisted }),
      );
      out('OK');
    };
  }
  if (action === 'modify') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        category: { type: 'string' },
        'no-category': { type: 'boolean' },
        disable: { type: 'boolean' },
        enable: { type: 'boolean' },
        unlisted: { type: 'boolean' },
        listed: { type: 'boolean' },
      },
    });
    if (positionals.length !== 1) throw new CliError('emoji modify needs exactly one SHORTCODE');
    if (values.disable && values.enable) throw new CliError('--disable and --enable cannot be used together');
    if (values.unlisted && values.listed) throw new CliError('--unlisted and --listed cannot be used together');
    if (values.category !== undefined && values['no-category'])
      throw new CliError('--category and --no-category cannot be used together');
    const category = values['no-category'] ? null : values.category;
    const disabled = values.disable ? true : values.enable ? false : undefined;
    const visibleInPicker = values.unlisted ? false : values.listed ? true : undefined;
    return async (core, out) => {
      await friendly(modifyCustomEmoji(core, positionals[0], { category, disabled, visibleInPicker }));
      out('OK');
    };
  }
  if (action === 'import') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        prefix: { type: 'string' },
        suffix: { type: 'string' },
        overwrite: { type: 'boolean' },
        category: { type: 'string' },
        unlisted: { type: 'boolean' },
      },
    });
    if (positionals.length !== 1) throw new CliError('emoji import needs exactly one FILE (a .tar.gz archive)');
    const [file] = positionals;
    return async (core, out) => {
      const gz = await readFile(file).catch(() => {
        throw new CliError(`Cannot read ${file}`);
      });
      let entries;
      try {
        entries = readTarGz(gz, { maxBytes: EMOJI_ARCHIVE_MAX_BYTES, maxFileBytes: EMOJI_SIZE_LIMIT });
      } catch (err) {
        if (err instanceof TarError) throw new CliError(`${file}: ${err.message}`);
        throw err;
      }
      const counts = { imported: 0, skipped: 0, failed: 0 };
      for (const entry of entries) {
        // As tootctl: PNG and GIF files, named by their file name, macOS "._" shadow files skipped.
        if (!/\.(png|gif)$/.test(entry.name)) continue;
        const name = basename(entry.name, extname(entry.name));
        if (name.startsWith('._')) continue;
        const shortcode = `${values.prefix ?? ''}${name}${values.suffix ?? ''}`;
        try {
          if (!entry.data) throw new EmojiError('Image must be less than 256 KB');
          counts[
            await importCustomEmoji(core, {
              shortcode,
              data: entry.data,
              category: values.category ?? null,
              visibleInPicker: !values.unlisted,
              overwrite: values.overwrite === true,
            })
          ]++;
        } catch (err) {
          if (!(err instanceof EmojiError)) throw err;
          counts.failed++;
          out(`Failure/Error: ${entry.name}`);
          out(`    ${err.message}`);
        }
      }
      out(`Imported ${counts.imported}, skipped ${counts.skipped}, failed to import ${counts.failed}`);
    };
  }
  if (action === 'remove') {
    if (rest.length !== 1) throw new CliError('emoji remove needs exactly one SHORTCODE');
    return async (core, out) => {
      await friendly(removeCustomEmoji(core, rest[0]));
      out('OK');
    };
  }
  throw new CliError(`Unknown command: emoji ${action ?? ''}`);
}
