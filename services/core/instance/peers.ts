// GET /api/v1/instance/peers: the domains this server has met (those of the remote accounts it
// knows), minus the domains an administrator suspended.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts } from '../model/accounts.ts';
import { publicDomainBlocks } from './domainBlocks.ts';

export async function instancePeers(core: Core): Promise<string[]> {
  const [domains, blocks] = await Promise.all([
    collection(core.db, accounts)
      .aggregate<{ _id: string }>([{ $match: { domain: { $ne: null } } }, { $group: { _id: '$domain' } }])
      .toArray(),
    publicDomainBlocks(core),
  ]);
  const suspended = blocks.filter((b) => b.severity === 'suspend').map((b) => b.domain.replace(/:\d+$/, ''));
  const isSuspended = (d: string) => suspended.some((s) => d === s || d.endsWith(`.${s}`));
  return domains
    .map((d) => d._id)
    .filter((d) => !isSuspended(d))
    .sort();
}
