// `cli media remove [--days N]` (Mastodon's `tootctl media remove`): drops the cached copies of
// remote attachments cached more than N days ago (default 7). The attachments keep their
// `remote_url`; the media proxy fetches a file again when somebody asks for it.
import { parseArgs } from 'node:util';
import type { Core } from '../core/context.ts';
import { removeCachedRemoteMedia } from '../core/media/remoteCache.ts';
import { CliError, type Out } from './commands.ts';

export const MEDIA_USAGE = `  cli media remove [--days N]`;

type Command = (core: Core, out: Out) => Promise<void>;

export function parseMediaCommand(
  group: string | undefined,
  action: string | undefined,
  rest: string[],
): Command | null {
  if (group !== 'media') return null;
  if (action !== 'remove') throw new CliError(`Unknown command: media ${action ?? ''}`);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { days: { type: 'string' } },
  });
  if (positionals.length > 0) throw new CliError('media remove takes no arguments');
  const raw = values.days ?? '7';
  if (!/^\d{1,5}$/.test(raw)) throw new CliError(`--days must be a whole number of days, got "${raw}"`);
  const days = Number(raw);
  return async (core, out) => {
    const n = await removeCachedRemoteMedia(core, new Date(Date.now() - days * 86_400_000));
    out(`Removed ${n} cached media attachments older than ${days} days`);
  };
}
