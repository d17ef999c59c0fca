// Sign-up and access rules moderators set: blocked e-mail domains, blocked canonical addresses and
// IP ranges (Mastodon's EmailDomainBlock, CanonicalEmailBlock, IpBlock).
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface EmailDomainBlockDoc {
  _id: Id;
  /** Lower case, punycode; covers subdomains. */
  domain: string;
  /** Sign-ups from it go to the approval queue instead of being refused. */
  allowWithApproval: boolean;
  /** Set on the MX-resolved variants recorded with a block: the block they came from. */
  parentId: Id | null;
  createdAt: Date;
  updatedAt: Date;
}

export const emailDomainBlocks = defineCollection<EmailDomainBlockDoc>('email_domain_blocks', [
  { key: { domain: 1 }, name: 'domain', unique: true },
  { key: { parentId: 1 }, name: 'parent' },
]);

export interface CanonicalEmailBlockDoc {
  _id: Id;
  /** SHA-256 hex of the canonical address (lower case, dots and +tags dropped from the local part). */
  canonicalEmailHash: string;
  /** The account whose address it was, when blocked through a suspension. */
  referenceAccountId: Id | null;
  createdAt: Date;
  updatedAt: Date;
}

export const canonicalEmailBlocks = defineCollection<CanonicalEmailBlockDoc>('canonical_email_blocks', [
  { key: { canonicalEmailHash: 1 }, name: 'hash', unique: true },
]);

export type IpBlockSeverity = 'sign_up_requires_approval' | 'sign_up_block' | 'no_access';
export const IP_BLOCK_SEVERITIES: readonly IpBlockSeverity[] = [
  'sign_up_requires_approval',
  'sign_up_block',
  'no_access',
];

export interface IpBlockDoc {
  _id: Id;
  /** Normalised CIDR, e.g. `192.0.2.0/24`, `2001:db8::/32`. */
  ip: string;
  severity: IpBlockSeverity;
  comment: string;
  expiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const ipBlocks = defineCollection<IpBlockDoc>('ip_blocks', [{ key: { ip: 1 }, name: 'ip', unique: true }]);
