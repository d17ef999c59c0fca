// E-mail rules for sign-up and e-mail changes: blocked e-mail domains (Mastodon's EmailDomainBlock,
// covering subdomains and, where DNS answers, the domains of the mail servers that serve a blocked
// domain) and blocked canonical addresses (CanonicalEmailBlock: `john.doe+x@example.com` and
// `johndoe@example.com` are one address). Suspending a local account blocks its address.
import { createHash } from 'node:crypto';
import { promises as dns } from 'node:dns';
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, insertOnce, insertUnique } from '../db/mongo.ts';
import {
  emailDomainBlocks,
  canonicalEmailBlocks,
  type EmailDomainBlockDoc,
  type CanonicalEmailBlockDoc,
} from '../model/signUpBlocks.ts';
import { orNotFound, validationFailed } from '../errors.ts';
import { domainVariants, normalizeDomain } from './domainBlocks.ts';
import { logAdminAction, type Actor } from '../users/moderation.ts';

export type { EmailDomainBlockDoc, CanonicalEmailBlockDoc };

// ---------------------------------------------------------------------------------------------
// MX resolution (replaceable: tests install a stub, deployments without DNS get nothing)

export type MxResolver = (domain: string) => Promise<string[]>;

const MX_TIMEOUT_MS = 3_000;

const systemMxResolver: MxResolver = async (domain) => {
  const lookup = dns.resolveMx(domain).then((records) => records.map((r) => r.exchange));
  const timeout = new Promise<string[]>((resolve) => setTimeout(() => resolve([]), MX_TIMEOUT_MS).unref());
  return Promise.race([lookup, timeout]).catch(() => []);
};

let mxResolver: MxResolver = systemMxResolver;

/** Replaces how MX hosts are found (tests); `null` restores the system resolver. */
export function setMxResolver(resolver: MxResolver | null): void {
  mxResolver = resolver ?? systemMxResolver;
}

async function mxDomains(domain: string): Promise<string[]> {
  const hosts = await mxResolver(domain).catch(() => []);
  return [...new Set(hosts.map((h) => normalizeDomain(h)).filter((h): h is string => h !== null && h !== domain))];
}

// ---------------------------------------------------------------------------------------------
// Canonical addresses

/** Mastodon's canonical form: lower case, dots and a `+tag` dropped from the local part. */
export function canonicalEmail(email: string): string {
  const lower = email.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at < 0) return lower;
  const local = lower.slice(0, at).replace(/\./g, '').replace(/\+.*$/, '');
  return `${local}@${lower.slice(at + 1)}`;
}

export function canonicalEmailHash(email: string): string {
  return createHash('sha256').update(canonicalEmail(email)).digest('hex');
}

function emailDomain(email: string): string | null {
  const at = email.lastIndexOf('@');
  return at < 0 ? null : normalizeDomain(email.slice(at + 1));
}

// ---------------------------------------------------------------------------------------------
// The check at sign-up and e-mail change

export type EmailVerdict = 'allowed' | 'requires_approval' | 'blocked';

/** Mastodon's validation error for a blocked address. */
export function blockedEmailProblem(): { error: string; description: string } {
  return { error: 'ERR_BLOCKED', description: 'uses a disallowed e-mail provider' };
}

/**
 * For an e-mail change: 422 when the new address is blocked (an address change must not get round
 * a block that sign-up would have hit). Addresses that would need approval are refused too: the
 * account is approved already.
 */
export async function assertEmailAllowed(core: Core, email: string): Promise<void> {
  if ((await checkEmail(core, email)) !== 'allowed') {
    const problem = blockedEmailProblem();
    throw validationFailed(`Email ${problem.description}`, { email: [problem] });
  }
}

/**
 * What the rules say about an address: `blocked` (canonical block, or a domain block without
 * approval), `requires_approval` (a domain block that allows sign-ups with approval) or `allowed`.
 * The domain, its parents and the domains of its mail servers are checked.
 */
export async function checkEmail(core: Core, email: string): Promise<EmailVerdict> {
  const hash = canonicalEmailHash(email);
  if ((await collection(core.db, canonicalEmailBlocks).countDocuments({ canonicalEmailHash: hash }, { limit: 1 })) > 0)
    return 'blocked';
  const domain = emailDomain(email);
  if (!domain) return 'allowed';
  const coll = collection(core.db, emailDomainBlocks);
  // No rules at all: no DNS either.
  if ((await coll.countDocuments({}, { limit: 1 })) === 0) return 'allowed';
  const candidates = new Set(domainVariants(domain));
  let hits = await coll.find({ domain: { $in: [...candidates] } }).toArray();
  if (hits.length === 0) {
    const viaMx = (await mxDomains(domain)).flatMap((d) => domainVariants(d));
    if (viaMx.length > 0) hits = await coll.find({ domain: { $in: viaMx } }).toArray();
  }
  if (hits.length === 0) return 'allowed';
  return hits.every((h) => h.allowWithApproval) ? 'requires_approval' : 'blocked';
}

// ---------------------------------------------------------------------------------------------
// E-mail domain blocks

export async function createEmailDomainBlock(
  core: Core,
  input: { domain?: string; allowWithApproval?: boolean },
  actor: Actor,
): Promise<EmailDomainBlockDoc> {
  if (input.domain === undefined || input.domain.trim() === '') throw validationFailed("Domain can't be blank");
  const domain = normalizeDomain(input.domain);
  if (!domain) throw validationFailed('Domain is invalid, Domain is not a valid domain name');
  const coll = collection(core.db, emailDomainBlocks);
  if (await coll.findOne({ domain })) throw validationFailed('Domain has already been taken');
  const now = new Date();
  const block: EmailDomainBlockDoc = {
    _id: await nextSerialId(core.db, 'email_domain_blocks'),
    domain,
    allowWithApproval: input.allowWithApproval ?? false,
    parentId: null,
    createdAt: now,
    updatedAt: now,
  };
  await insertUnique(coll, block, () => validationFailed('Domain has already been taken'));
  // The domains of its mail servers are blocked with it (a sign-up through another domain served by
  // the same provider is caught too).
  for (const mx of await mxDomains(domain)) {
    await insertOnce(coll, {
      _id: await nextSerialId(core.db, 'email_domain_blocks'),
      domain: mx,
      allowWithApproval: block.allowWithApproval,
      parentId: block._id,
      createdAt: now,
      updatedAt: now,
    });
  }
  await logAdminAction(core, actor, 'create', { type: 'EmailDomainBlock', id: block._id, name: domain });
  return block;
}

export async function getEmailDomainBlock(core: Core, id: Id): Promise<EmailDomainBlockDoc> {
  return orNotFound(await collection(core.db, emailDomainBlocks).findOne({ _id: id }));
}

export async function deleteEmailDomainBlock(core: Core, id: Id, actor: Actor): Promise<void> {
  const block = orNotFound(await collection(core.db, emailDomainBlocks).findOneAndDelete({ _id: id }));
  await collection(core.db, emailDomainBlocks).deleteMany({ parentId: block._id });
  await logAdminAction(core, actor, 'destroy', { type: 'EmailDomainBlock', id: block._id, name: block.domain });
}

export async function emailDomainBlockByDomain(core: Core, input: string): Promise<EmailDomainBlockDoc | null> {
  const domain = normalizeDomain(input);
  return domain ? collection(core.db, emailDomainBlocks).findOne({ domain }) : null;
}

// ---------------------------------------------------------------------------------------------
// Canonical e-mail blocks

const HASH_RE = /^[0-9a-f]{64}$/;

export async function createCanonicalEmailBlock(
  core: Core,
  input: { email?: string; canonicalEmailHash?: string; referenceAccountId?: Id | null },
  actor: Actor,
): Promise<CanonicalEmailBlockDoc> {
  let hash: string;
  if (input.email !== undefined && input.email.trim() !== '') {
    if (input.email.length > 320 || !input.email.includes('@')) throw validationFailed('Email is invalid');
    hash = canonicalEmailHash(input.email);
  } else if (input.canonicalEmailHash !== undefined && input.canonicalEmailHash.trim() !== '') {
    hash = input.canonicalEmailHash.trim().toLowerCase();
    if (!HASH_RE.test(hash)) throw validationFailed('Canonical email hash is invalid');
  } else {
    throw validationFailed("Canonical email hash can't be blank");
  }
  const coll = collection(core.db, canonicalEmailBlocks);
  const now = new Date();
  const block: CanonicalEmailBlockDoc = {
    _id: await nextSerialId(core.db, 'canonical_email_blocks'),
    canonicalEmailHash: hash,
    referenceAccountId: input.referenceAccountId ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await insertUnique(coll, block, () => validationFailed('Canonical email hash has already been taken'));
  await logAdminAction(core, actor, 'create', { type: 'CanonicalEmailBlock', id: block._id, name: hash });
  return block;
}

export async function getCanonicalEmailBlock(core: Core, id: Id): Promise<CanonicalEmailBlockDoc> {
  return orNotFound(await collection(core.db, canonicalEmailBlocks).findOne({ _id: id }));
}

export async function deleteCanonicalEmailBlock(core: Core, id: Id, actor: Actor): Promise<void> {
  const block = orNotFound(await collection(core.db, canonicalEmailBlocks).findOneAndDelete({ _id: id }));
  await logAdminAction(core, actor, 'destroy', {
    type: 'CanonicalEmailBlock',
    id: block._id,
    name: block.canonicalEmailHash,
  });
}

/** The blocks matching an address (POST /api/v1/admin/canonical_email_blocks/test). */
export async function matchingCanonicalEmailBlocks(core: Core, email: string): Promise<CanonicalEmailBlockDoc[]> {
  return collection(core.db, canonicalEmailBlocks)
    .find({ canonicalEmailHash: canonicalEmailHash(email) })
    .toArray();
}

export function renderEmailDomainBlock(block: EmailDomainBlockDoc) {
  return {
    id: String(block._id),
    domain: block.domain,
    created_at: block.createdAt.toISOString(),
    history: [] as { day: string; accounts: string; uses: string }[],
    allow_with_approval: block.allowWithApproval,
  };
}

export function renderCanonicalEmailBlock(block: CanonicalEmailBlockDoc) {
  return { id: String(block._id), canonical_email_hash: block.canonicalEmailHash };
}
