// CLI commands for trends and search (`npm run cli -- trends ...`, `... search rebuild`):
//   trends list tags|statuses|links          ranked items with their review state
//   trends approve|reject tag NAME | status ID | link ID | publisher DOMAIN
//   trends auto-approve [on|off]              allow unreviewed items to trend (no value: prints it)
//   trends refresh                            recompute scores and rankings now
//   search rebuild                            re-index every status from MongoDB
import type { Core } from '../core/context.ts';
import { collection } from '../core/db/mongo.ts';
import { normalizeTagName } from '../core/text/extract.ts';
import { tags } from '../core/model/tags.ts';
import { statuses } from '../core/model/statuses.ts';
import { previewCards } from '../core/model/previewCards.ts';
import type { TrendKind } from '../core/model/trends.ts';
import { rankedForReview } from '../core/trends/queries.ts';
import { autoApprove, reviewTrend, setAutoApprove } from '../core/trends/review.ts';
import { refreshTrends } from '../core/trends/refresh.ts';
import { rebuildStatusIndex } from '../core/search/indexer.ts';
import { parseId } from '../core/ids.ts';
import { CliError, type Out } from './commands.ts';

export const TRENDS_USAGE = `  cli trends list tags|statuses|links
  cli trends approve|reject tag NAME | status ID | link ID | publisher DOMAIN
  cli trends auto-approve [on | off]
  cli trends refresh
  cli search rebuild`;

type Command = (core: Core, out: Out) => Promise<void>;

const KINDS: Record<string, TrendKind> = {
  tag: 'tag',
  tags: 'tag',
  status: 'status',
  statuses: 'status',
  link: 'link',
  links: 'link',
};

async function itemOf(core: Core, kind: TrendKind, raw: string): Promise<string> {
  if (kind === 'tag') {
    const tag = await collection(core.db, tags).findOne({ nameNormalized: normalizeTagName(raw.replace(/^#/, '')) });
    if (!tag) throw new CliError(`No such hashtag: ${raw}`);
    return tag.nameNormalized;
  }
  const id = parseId(raw);
  if (id === null) throw new CliError(`Not an id: ${raw}`);
  const found =
    kind === 'status'
      ? await collection(core.db, statuses).findOne({ _id: id, deletedAt: null })
      : await collection(core.db, previewCards).findOne({ _id: id });
  if (!found) throw new CliError(`No such ${kind}: ${raw}`);
  return String(id);
}

/** Parses `trends ...` / `search ...` arguments; null when the group is not ours. */
export function parseTrendsCommand(
  group: string | undefined,
  action: string | undefined,
  rest: string[],
): Command | null {
  if (group === 'search') {
    if (action !== 'rebuild' || rest.length > 0) throw new CliError('Usage: cli search rebuild');
    return async (core, out) => {
      const n = await rebuildStatusIndex(core, (done) => out(`${done} statuses indexed`));
      out(`OK: ${n} statuses indexed`);
    };
  }
  if (group !== 'trends') return null;
  switch (action) {
    case 'list': {
      const kind = KINDS[rest[0] ?? ''];
      if (!kind || rest.length !== 1) throw new CliError('Usage: cli trends list tags|statuses|links');
      return async (core, out) => {
        const items = await rankedForReview(core, kind, { limit: 1000, offset: 0 });
        for (const i of items)
          out(`${i.item}\t${i.score.toFixed(2)}\t${i.state ?? (i.requestedReview ? 'pending review' : 'unreviewed')}`);
      };
    }
    case 'approve':
    case 'reject': {
      if (rest[0] === 'publisher' && rest.length === 2)
        return async (core, out) => {
          const domain = (rest[1] as string).toLowerCase().replace(/^www\./, '');
          await reviewTrend(core, 'publisher', domain, action === 'approve' ? 'approved' : 'rejected', null);
          out('OK');
        };
      const kind = KINDS[rest[0] ?? ''];
      if (!kind || rest.length !== 2) throw new CliError(`Usage: cli trends ${action} tag NAME | status ID | link ID`);
      return async (core, out) => {
        const item = await itemOf(core, kind, rest[1] as string);
        await reviewTrend(core, kind, item, action === 'approve' ? 'approved' : 'rejected', null);
        out('OK');
      };
    }
    case 'auto-approve': {
      const value = rest[0];
      if (rest.length > 1 || (value !== undefined && value !== 'on' && value !== 'off'))
        throw new CliError('Usage: cli trends auto-approve [on | off]');
      return async (core, out) => {
        if (value === undefined) out((await autoApprove(core)) ? 'on' : 'off');
        else {
          await setAutoApprove(core, value === 'on');
          out('OK');
        }
      };
    }
    case 'refresh':
      if (rest.length > 0) throw new CliError('Usage: cli trends refresh');
      return async (core, out) => {
        const r = await refreshTrends(core);
        out(`OK: ${r.ranked.tag} hashtags, ${r.ranked.status} statuses, ${r.ranked.link} links ranked`);
      };
    default:
      throw new CliError(`Unknown command: trends ${action ?? ''}\n${TRENDS_USAGE}`);
  }
}
