// The domain blocks GET /api/v1/instance/domain_blocks publishes, read from moderation's rules
// (services/core/moderation/domainBlocks.ts): noop blocks are not listed, obfuscated ones partly
// starred, comments shown only where the rationale is visible to the caller.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { instanceDomainBlocks, type DomainBlockDoc } from '../model/instanceDomainBlocks.ts';
import { domainDigest, obfuscateDomain, onDomainBlockChange } from '../moderation/domainBlocks.ts';
import { invalidateInstanceCache } from './cache.ts';

// Peers leave out suspended domains: a block change drops the cached documents.
onDomainBlockChange(async (core) => invalidateInstanceCache(core));

export function publicDomainBlocks(core: Core): Promise<DomainBlockDoc[]> {
  return collection(core.db, instanceDomainBlocks).find({}).sort({ domain: 1 }).toArray();
}

export interface DomainBlockEntity {
  domain: string;
  digest: string;
  severity: 'silence' | 'suspend';
  comment?: string;
}

export function presentDomainBlocks(blocks: DomainBlockDoc[], withComments: boolean): DomainBlockEntity[] {
  return blocks
    .filter((b): b is DomainBlockDoc & { severity: 'silence' | 'suspend' } => b.severity !== 'noop')
    .sort((a, b) => a.domain.localeCompare(b.domain))
    .map((b) => {
      const out: DomainBlockEntity = {
        domain: b.obfuscate ? obfuscateDomain(b.domain) : b.domain,
        digest: domainDigest(b.domain),
        severity: b.severity,
      };
      if (withComments && b.publicComment) out.comment = b.publicComment;
      return out;
    });
}
