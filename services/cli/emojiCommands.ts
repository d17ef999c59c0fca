// `cli emoji`: custom emoji, as Mastodon's tootctl emoji: add one, modify one, import an archive of
// them, remove one, purge all (or the remote ones).
import { addCustomEmoji, allLocalEmojis, modifyCustomEmoji, removeCustomEmoji } from '../core/emojis/emojis.ts';
import { CliError, commandArgs, readInputFile } from './commands.ts';
import { TarError } from '../core/emojis/tarArchive.ts';
import { importEmojiArchive } from '../core/emojis/emojiArchive.ts';
import { purgeCustomEmojis } from '../core/emojis/emojiCopies.ts';
import { type SiteCommand, friendly } from './siteCommands.ts';

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
    const { values, positionals } = commandArgs(rest, { category: { type: 'string' }, unlisted: { type: 'boolean' } });
    if (positionals.length !== 2) throw new CliError('emoji add needs SHORTCODE and FILE');
    const [shortcode, file] = positionals;
    return async (core, out) => {
      const data = await readInputFile(file);
      await friendly(
        addCustomEmoji(core, { shortcode, data, category: values.category ?? null, visibleInPicker: !values.unlisted }),
      );
      out('OK');
    };
  }
  if (action === 'modify') {
    const { values, positionals } = commandArgs(rest, {
      category: { type: 'string' },
      'no-category': { type: 'boolean' },
      disable: { type: 'boolean' },
      enable: { type: 'boolean' },
      unlisted: { type: 'boolean' },
      listed: { type: 'boolean' },
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
    const { values, positionals } = commandArgs(rest, {
      prefix: { type: 'string' },
      suffix: { type: 'string' },
      overwrite: { type: 'boolean' },
      category: { type: 'string' },
      unlisted: { type: 'boolean' },
    });
    if (positionals.length !== 1) throw new CliError('emoji import needs exactly one FILE (a .tar.gz archive)');
    const [file] = positionals;
    return async (core, out) => {
      const gz = await readInputFile(file);
      let outcome;
      try {
        outcome = await importEmojiArchive(core, gz, {
          prefix: values.prefix,
          suffix: values.suffix,
          overwrite: values.overwrite === true,
          category: values.category ?? null,
          visibleInPicker: !values.unlisted,
        });
      } catch (err) {
        if (err instanceof TarError) throw new CliError(`${file}: ${err.message}`);
        throw err;
      }
      for (const f of outcome.failed) {
        out(`Failure/Error: ${f.file}`);
        out(`    ${f.reason}`);
      }
      out(`Imported ${outcome.imported}, skipped ${outcome.skipped}, failed to import ${outcome.failed.length}`);
    };
  }
  if (action === 'purge') {
    const { values, positionals } = commandArgs(rest, { 'remote-only': { type: 'boolean' } });
    if (positionals.length > 0) throw new CliError('emoji purge takes no arguments');
    return async (core, out) => {
      const removed = await purgeCustomEmojis(core, { remoteOnly: values['remote-only'] === true });
      out(`OK, removed ${removed} custom emoji${removed === 1 ? '' : 's'}`);
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
