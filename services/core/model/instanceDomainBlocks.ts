// Instance-wide federation rules set by moderators (Mastodon's DomainBlock and DomainAllow), unlike
// `account_domain_blocks`, which are one user's own. A rule on a domain covers its subdomains.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export type DomainBlockSeverity = 'silence' | 'suspend' | 'noop';

export interface DomainBlockDoc {
  _id: Id;
  /** Lower case, punycode, no trailing dot (optionally `:port`). */
  domain: string;
  severity: DomainBlockSeverity;
  /** Media from the domain is not downloaded (shown as links). */
  rejectMedia: boolean;
  /** Reports from the domain are ignored. */
  rejectReports: boolean;
  /** Seen by moderators only. */
  privateComment: string | null;
  /** Shown on the public list of limited servers. */
  publicComment: string | null;
  /** Partly hidden on the public list. */
  obfuscate: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface DomainAllowDoc {
  _id: Id;
  domain: string;
  createdAt: Date;
  updatedAt: Date;
}

export const instanceDomainBlocks = defineCollection<DomainBlockDoc>('domain_blocks', [
  { key: { domain: 1 }, name: 'domain', unique: true },
]);

export const domainAllows = defineCollection<DomainAllowDoc>('domain_allows', [
  { key: { domain: 1 }, name: 'domain', unique: true },
]);
