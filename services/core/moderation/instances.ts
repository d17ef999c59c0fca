// Known servers for the moderation dashboard (Mastodon's /admin/instances): each domain this server
// knows accounts of, with how many, its domain block or allow, and its delivery health (the
// circuit breaker's state in Redis).
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { reports } from '../model/reports.ts';
import { domainAllows, instanceDomainBlocks } from '../model/instanceDomainBlocks.ts';
import { allHostStates, resumeHost, type HostState } from '../activitypub/delivery/hostState.ts';
import { normalizeDomain } from './domainBlocks.ts';
import { escapeRegex } from '../text/escapeRegex.ts';

export interface KnownInstance {
  domain: string;
  accounts: number;
  reports: number;
  severity: string | null;
  allowed: boolean;
  delivery: HostState | null;
}

const MAX_LISTED = 200;

/** The known servers, most accounts first, optionally only those whose domain contains `search`. */
export async function knownInstances(core: Core, search = ''): Promise<KnownInstance[]> {
  const match: Record<string, unknown> = { domain: { $ne: null } };
  const needle = search.trim().toLowerCase();
  if (needle) match.domain = { $regex: escapeRegex(needle) };
  const counted = await collection(core.db, accounts)
    .aggregate<{ _id: string; n: number }>([
      { $match: match },
      { $group: { _id: '$domain', n: { $sum: 1 } } },
      { $sort: { n: -1, _id: 1 } },
      { $limit: MAX_LISTED },
    ])
    .toArray();
  const domains = counted.map((c) => c._id);
  const [blocks, allows, states, reported] = await Promise.all([
    collection(core.db, instanceDomainBlocks)
      .find({ domain: { $in: domains } })
      .toArray(),
    collection(core.db, domainAllows)
      .find({ domain: { $in: domains } })
      .toArray(),
    allHostStates(core.redis),
    reportCounts(core, domains),
  ]);
  const severity = new Map(blocks.map((b) => [b.domain, b.severity]));
  const allowed = new Set(allows.map((a) => a.domain));
  const health = new Map(states.map((s) => [s.host, s]));
  return counted.map((c) => ({
    domain: c._id,
    accounts: c.n,
    reports: reported.get(c._id) ?? 0,
    severity: severity.get(c._id) ?? null,
    allowed: allowed.has(c._id),
    delivery: health.get(c._id) ?? null,
  }));
}

/** Reports against accounts of each domain (reports are few: grouped by target, then placed). */
async function reportCounts(core: Core, domains: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (domains.length === 0) return out;
  const byTarget = await collection(core.db, reports)
    .aggregate<{ _id: bigint; n: number }>([{ $group: { _id: '$targetAccountId', n: { $sum: 1 } } }])
    .toArray();
  const targets = await collection(core.db, accounts)
    .find({ _id: { $in: byTarget.map((r) => r._id) }, domain: { $in: domains } }, { projection: { domain: 1 } })
    .toArray();
  const domainOf = new Map(targets.map((t) => [t._id, t.domain as string]));
  for (const r of byTarget) {
    const domain = domainOf.get(r._id);
    if (domain) out.set(domain, (out.get(domain) ?? 0) + r.n);
  }
  return out;
}

/**
 * Mastodon's "Mark as available": a moderator resets a server's delivery failures; an open
 * breaker's parked deliveries go out again. False when the server had no failures.
 */
export async function markInstanceAvailable(core: Core, input: string): Promise<boolean> {
  const domain = normalizeDomain(input);
  if (!domain) return false;
  return resumeHost(core.redis, domain);
}
