// `cli media remove [--days N]` (Mastodon's `tootctl media remove`): drops the cached copies of
// remote attachments cached more than N days ago (default 7). The attachments keep their
// `remote_url`; the media proxy fetches a file again when somebody asks for it. With
// `--prune-profiles` it drops the copies of remote avatars and headers instead (`--remove-headers`:
// headers only) of accounts not updated for N days, by default only of accounts without local
// follows either way (`--include-follows`: all); `--dry-run` counts without removing.
import type { Core } from '../core/context.ts';
import { removeCachedRemoteMedia } from '../core/media/remoteCache.ts';
import { pruneRemoteProfileImages } from '../core/media/remoteProfileImages.ts';
import { CliError, commandArgs, type Out } from './commands.ts';

export const MEDIA_USAGE = `  cli media remove [--days N] [--prune-profiles | --remove-headers] [--include-follows] [--dry-run]`;

type Command = (core: Core, out: Out) => Promise<void>;

export function parseMediaCommand(
  group: string | undefined,
  action: string | undefined,
  rest: string[],
): Command | null {
  if (group !== 'media') return null;
  if (action !== 'remove') throw new CliError(`Unknown command: media ${action ?? ''}`);
  const { values, positionals } = commandArgs(rest, {
    days: { type: 'string' },
    'prune-profiles': { type: 'boolean' },
    'remove-headers': { type: 'boolean' },
    'include-follows': { type: 'boolean' },
    'dry-run': { type: 'boolean' },
  });
  if (positionals.length > 0) throw new CliError('media remove takes no arguments');
  const raw = values.days ?? '7';
  if (!/^\d{1,5}$/.test(raw)) throw new CliError(`--days must be a whole number of days, got "${raw}"`);
  const days = Number(raw);
  const profiles = values['prune-profiles'] === true;
  const headers = values['remove-headers'] === true;
  const includeFollows = values['include-follows'] === true;
  const dryRun = values['dry-run'] === true;
  // Mastodon's own messages for the combinations it refuses.
  if (profiles && headers)
    throw new CliError('--prune-profiles and --remove-headers should not be specified simultaneously');
  if (includeFollows && !profiles && !headers)
    throw new CliError('--include-follows can only be used with --prune-profiles or --remove-headers');
  const suffix = dryRun ? ' (DRY RUN)' : '';
  if (profiles || headers)
    return async (core, out) => {
      const n = await pruneRemoteProfileImages(core, {
        before: new Date(Date.now() - days * 86_400_000),
        headersOnly: headers,
        includeFollows,
        dryRun,
      });
      out(`Removed the profile media of ${n} accounts not updated for ${days} days${suffix}`);
    };
  if (dryRun) throw new CliError('--dry-run applies to --prune-profiles and --remove-headers here');
  return async (core, out) => {
    const n = await removeCachedRemoteMedia(core, new Date(Date.now() - days * 86_400_000));
    out(`Removed ${n} cached media attachments older than ${days} days`);
  };
}
