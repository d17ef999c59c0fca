// The domain blocks GET /api/v1/instance/domain_blocks publishes. The blocks themselves belong to
// moderation (services/core/moderation/domainBlocks.ts); it installs its lookup here with
// `useDomainBlockLookup` so the instance surface does not depend on how blocks are stored. Until
// one is installed there are none.
import { createHash } from 'node:crypto';
import type { Core } from '../context.ts';

export interface PublicDomainBlock {
  domain: string;
  severity: 'noop' | 'silence' | 'suspend';
  publicComment: string | null;
  /** Publish the domain partly starred. */
  obfuscate: boolean;
}

export type DomainBlockLookup = (core: Core) => Promise<PublicDomainBlock[]>;

let lookup: DomainBlockLookup = async () => [];

export function useDomainBlockLookup(fn: DomainBlockLookup): void {
  lookup = fn;
}

export function publicDomainBlocks(core: Core): Promise<PublicDomainBlock[]> {
  return lookup(core);
}

export interface DomainBlockEntity {
  domain: string;
  digest: string;
  severity: 'silence' | 'suspend';
  comment?: string;
}

/** Mastodon's obfuscation: the middle half of the name starred, dots kept ("exa****e.com"). */
export function obfuscateDomain(domain: string): string {
  const n = domain.length;
  const visible = Math.floor(n / 4);
  return [...domain].map((c, i) => (i > visible && i < n - visible && c !== '.' ? '*' : c)).join('');
}

export function presentDomainBlocks(blocks: PublicDomainBlock[], withComments: boolean): DomainBlockEntity[] {
  return blocks
    .filter((b): b is PublicDomainBlock & { severity: 'silence' | 'suspend' } => b.severity !== 'noop')
    .sort((a, b) => a.domain.localeCompare(b.domain))
    .map((b) => {
      const out: DomainBlockEntity = {
        domain: b.obfuscate ? obfuscateDomain(b.domain) : b.domain,
        digest: createHash('sha256').update(b.domain).digest('hex'),
        severity: b.severity,
      };
      if (withComments && b.publicComment) out.comment = b.publicComment;
      return out;
    });
}
