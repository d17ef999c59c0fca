// Instance-wide domain blocks and allows (Mastodon's DomainBlock / DomainAllow): the rules the
// federation code enforces (allows are made in domainAllows.ts). A rule on `example.com` covers
// `sub.example.com`; the most specific rule wins. Lookups read a per-process snapshot of all
// rules, refreshed every few seconds and dropped at once when this process changes a rule, so
// inbound and delivery paths pay no query.
// This module's exported API is what federation (inbound, delivery) builds on: keep it stable.
import { createHash } from 'node:crypto';
import { domainToASCII } from 'node:url';
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { DomainError, notFound, orNotFound, validationFailed, unprocessable } from '../errors.ts';
import {
  instanceDomainBlocks,
  domainAllows,
  type DomainBlockDoc,
  type DomainAllowDoc,
  type DomainBlockSeverity,
} from '../model/instanceDomainBlocks.ts';
import { logAdminAction } from '../users/moderation.ts';
import { TtlCache } from '../cache/ttlCache.ts';

export type { DomainBlockDoc, DomainAllowDoc, DomainBlockSeverity };
export const DOMAIN_BLOCK_SEVERITIES: readonly DomainBlockSeverity[] = ['silence', 'suspend', 'noop'];

/** The acting moderator's account id; null for the command line. */
export type Actor = Id | null;

/**
 * Canonical form of a domain: lower case, IDNA (punycode), no trailing dot, an optional `:port`
 * kept. Accepts a URL or `user@domain` and gives its host; a leading `*.` is dropped (a rule
 * covers subdomains anyway). null when it is not a domain name.
 */
export function normalizeDomain(input: string): string | null {
  let raw = input.trim();
  if (raw.length === 0 || raw.length > 300) return null;
  if (raw.includes('://')) {
    try {
      raw = new URL(raw).host;
    } catch {
      return null;
    }
  }
  if (raw.includes('@')) raw = raw.slice(raw.lastIndexOf('@') + 1);
  raw = raw.replace(/\/+$/, '');
  let port = '';
  const portMatch = /:(\d{1,5})$/.exec(raw);
  if (portMatch) {
    port = portMatch[0];
    raw = raw.slice(0, -port.length);
  }
  raw = raw.replace(/^\*\./, '').replace(/\.+$/, '');
  if (!raw || raw.length > 253) return null;
  const ascii = domainToASCII(raw.toLowerCase());
  if (!ascii || !/^[a-z0-9.-]+$/.test(ascii) || ascii.startsWith('.') || ascii.includes('..')) return null;
  if (ascii.split('.').some((label) => label.length === 0 || label.length > 63)) return null;
  return ascii + port;
}

/** The domain and each parent domain, most specific first: a.b.c → a.b.c, b.c, c. */
export function domainVariants(domain: string): string[] {
  const portMatch = /:\d+$/.exec(domain);
  const host = portMatch ? domain.slice(0, -portMatch[0].length) : domain;
  const labels = host.split('.');
  const variants = labels.map((_, i) => labels.slice(i).join('.'));
  return portMatch ? [domain, ...variants] : variants;
}

// ---------------------------------------------------------------------------------------------
// Lookup (cached)

const CACHE_MS = 5_000;

interface Snapshot {
  blocks: Map<string, DomainBlockDoc>;
  allows: Map<string, DomainAllowDoc>;
}

/** Each kept from the start of its load. */
const snapshots = new TtlCache<string, Promise<Snapshot>>(CACHE_MS, 100);

function cacheKey(core: Core): string {
  return core.db.databaseName;
}

async function loadSnapshot(core: Core): Promise<Snapshot> {
  const [blocks, allows] = await Promise.all([
    collection(core.db, instanceDomainBlocks).find({}).toArray(),
    collection(core.db, domainAllows).find({}).toArray(),
  ]);
  return {
    blocks: new Map(blocks.map((b) => [b.domain, b])),
    allows: new Map(allows.map((a) => [a.domain, a])),
  };
}

async function snapshot(core: Core): Promise<Snapshot> {
  const key = cacheKey(core);
  const cached = snapshots.get(key);
  if (cached) {
    const snap = await cached.catch(() => null);
    if (snap) return snap;
    if (snapshots.get(key) !== cached) return snapshot(core);
  }
  const loading = loadSnapshot(core);
  snapshots.set(key, loading);
  try {
    return await loading;
  } catch (err) {
    if (snapshots.get(key) === loading) snapshots.delete(key);
    throw err;
  }
}

/** Forgets this process's cached rules (called after every change; other processes refresh within seconds). */
export function invalidateDomainRules(core: Core): void {
  snapshots.delete(cacheKey(core));
}

function mostSpecific<T>(map: Map<string, T>, domain: string): T | null {
  const normal = normalizeDomain(domain);
  if (!normal) return null;
  for (const variant of domainVariants(normal)) {
    const hit = map.get(variant);
    if (hit) return hit;
  }
  return null;
}

/** The block that applies to a domain (its own or a parent domain's, the most specific); null when none. */
export async function findDomainBlock(core: Core, domain: string | null | undefined): Promise<DomainBlockDoc | null> {
  if (!domain) return null;
  return mostSpecific((await snapshot(core)).blocks, domain);
}

/** The allow that covers a domain (its own or a parent domain's); null when none. */
export async function findDomainAllow(core: Core, domain: string | null | undefined): Promise<DomainAllowDoc | null> {
  if (!domain) return null;
  return mostSpecific((await snapshot(core)).allows, domain);
}

/** What the instance's rules mean for one remote domain; every flag false for local content (null domain). */
export interface DomainPolicy {
  /** Suspended by a block, or not on the allow list in limited-federation mode: no federation at all. */
  rejected: boolean;
  /** A `silence` block: its accounts are limited. */
  silenced: boolean;
  /** Do not fetch or store media from it. */
  rejectMedia: boolean;
  /** Ignore its Flag activities. */
  rejectReports: boolean;
  /** The block behind the policy, when there is one. */
  block: DomainBlockDoc | null;
}

const OPEN_POLICY: DomainPolicy = {
  rejected: false,
  silenced: false,
  rejectMedia: false,
  rejectReports: false,
  block: null,
};

export async function domainPolicy(core: Core, domain: string | null | undefined): Promise<DomainPolicy> {
  if (!domain || isLocalDomain(core, domain)) return OPEN_POLICY;
  const block = await findDomainBlock(core, domain);
  const notAllowed = core.config.limitedFederationMode && !(await findDomainAllow(core, domain));
  const suspended = block?.severity === 'suspend';
  return {
    rejected: suspended || notAllowed,
    silenced: block?.severity === 'silence',
    // A suspended domain's media and reports are refused too (Mastodon treats suspend as reject-all).
    rejectMedia: suspended || notAllowed || (block?.rejectMedia ?? false),
    rejectReports: suspended || notAllowed || (block?.rejectReports ?? false),
    block,
  };
}

/** True when nothing may be exchanged with the domain (Mastodon's DomainBlock.blocked? plus limited federation). */
export async function isDomainRejected(core: Core, domain: string | null | undefined): Promise<boolean> {
  return (await domainPolicy(core, domain)).rejected;
}

function isLocalDomain(core: Core, domain: string): boolean {
  const d = domain.toLowerCase();
  return d === core.config.localDomain.toLowerCase() || d === core.config.webDomain.toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// Rendering (Admin::DomainBlock, Admin::DomainAllow, the public DomainBlock)

/** SHA-256 hex of the domain, as Mastodon publishes next to obfuscated domains. */
export function domainDigest(domain: string): string {
  return createHash('sha256').update(domain).digest('hex');
}

export function renderAdminDomainBlock(block: DomainBlockDoc) {
  return {
    id: String(block._id),
    domain: block.domain,
    digest: domainDigest(block.domain),
    created_at: block.createdAt.toISOString(),
    severity: block.severity,
    reject_media: block.rejectMedia,
    reject_reports: block.rejectReports,
    private_comment: block.privateComment,
    public_comment: block.publicComment,
    obfuscate: block.obfuscate,
  };
}

/** Mastodon's obfuscation (DomainBlock#public_domain): the middle half of the name becomes `*`, dots stay. */
export function obfuscateDomain(domain: string): string {
  const length = domain.length;
  const visible = Math.floor(length / 4);
  return [...domain].map((ch, i) => (i > visible && i < length - visible && ch !== '.' ? '*' : ch)).join('');
}

/** The public DomainBlock entity (GET /api/v1/instance/domain_blocks). */
export function renderPublicDomainBlock(block: DomainBlockDoc) {
  return {
    domain: block.obfuscate ? obfuscateDomain(block.domain) : block.domain,
    digest: domainDigest(block.domain),
    severity: block.severity,
    comment: block.publicComment ?? '',
  };
}

// ---------------------------------------------------------------------------------------------
// Changes

export interface DomainBlockInput {
  domain?: string;
  severity?: string;
  rejectMedia?: boolean;
  rejectReports?: boolean;
  privateComment?: string | null;
  publicComment?: string | null;
  obfuscate?: boolean;
}

const COMMENT_MAX = 1_000;

function checkComment(name: string, value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (value.length > COMMENT_MAX) throw validationFailed(`${name} is too long (maximum is ${COMMENT_MAX} characters)`);
  return value.trim() === '' ? null : value;
}

function checkSeverity(value: string | undefined): DomainBlockSeverity | undefined {
  if (value === undefined) return undefined;
  if (!(DOMAIN_BLOCK_SEVERITIES as readonly string[]).includes(value))
    throw validationFailed('Severity is not included in the list');
  return value as DomainBlockSeverity;
}

/** Mastodon's DomainBlock#stricter_than?: does `a` limit at least as much as `b`? */
export function isStricterThan(
  a: Pick<DomainBlockDoc, 'severity' | 'rejectMedia' | 'rejectReports'>,
  b: Pick<DomainBlockDoc, 'severity' | 'rejectMedia' | 'rejectReports'>,
): boolean {
  if (a.severity === 'suspend') return true;
  if (b.severity === 'suspend') return false;
  if (b.severity === 'silence' && a.severity === 'noop') return false;
  return (a.rejectMedia || !b.rejectMedia) && (a.rejectReports || !b.rejectReports);
}

/** A create that conflicts with a block already covering the domain (422 with `existing_domain_block`). */
export function existingDomainBlockError(existing: DomainBlockDoc): DomainError {
  return unprocessable(`You have already imposed stricter limits on ${existing.domain}.`, {
    existing_domain_block: renderAdminDomainBlock(existing),
  });
}

/** Called after a block is created, changed or removed: applies it to the domain's accounts. */
export type DomainBlockHook = (core: Core, change: DomainBlockChange) => Promise<void>;
export interface DomainBlockChange {
  kind: 'created' | 'updated' | 'deleted';
  block: DomainBlockDoc;
  /** The block before an update. */
  previous: DomainBlockDoc | null;
  actor: Actor;
}

const hooks: DomainBlockHook[] = [];
/** Registers what a block change does beyond the rule itself (account limits, purges, the action log). */
export function onDomainBlockChange(hook: DomainBlockHook): void {
  hooks.push(hook);
}

async function runHooks(core: Core, change: DomainBlockChange): Promise<void> {
  await logAdminAction(
    core,
    change.actor,
    { created: 'create', updated: 'update', deleted: 'destroy' }[change.kind],
    { type: 'DomainBlock', id: change.block._id, name: change.block.domain },
    { severity: change.block.severity },
  );
  // Loaded on use: the effects module builds on account actions, which build on this module.
  const { applyDomainBlockChange } = await import('./domainBlockEffects.ts');
  await applyDomainBlockChange(core, change);
  for (const hook of hooks) await hook(core, change);
}

export async function createDomainBlock(core: Core, input: DomainBlockInput, actor: Actor): Promise<DomainBlockDoc> {
  if (input.domain === undefined || input.domain.trim() === '') throw validationFailed("Domain can't be blank");
  const domain = normalizeDomain(input.domain);
  if (!domain) throw validationFailed('Domain is not a valid domain name');
  if (isLocalDomain(core, domain)) throw validationFailed('Domain cannot be your own');
  const now = new Date();
  const block: DomainBlockDoc = {
    _id: 0n,
    domain,
    severity: checkSeverity(input.severity) ?? 'silence',
    rejectMedia: input.rejectMedia ?? false,
    rejectReports: input.rejectReports ?? false,
    privateComment: checkComment('Private comment', input.privateComment) ?? null,
    publicComment: checkComment('Public comment', input.publicComment) ?? null,
    obfuscate: input.obfuscate ?? false,
    createdAt: now,
    updatedAt: now,
  };
  // The rule already covering the domain (its own or a parent's, the most specific), read fresh.
  const covering =
    (
      await collection(core.db, instanceDomainBlocks)
        .find({ domain: { $in: domainVariants(domain) } })
        .toArray()
    ).sort((a, b) => b.domain.length - a.domain.length)[0] ?? null;
  if (covering && (covering.domain === domain || !isStricterThan(block, covering)))
    throw existingDomainBlockError(covering);
  block._id = await nextSerialId(core.db, 'domain_blocks');
  try {
    await collection(core.db, instanceDomainBlocks).insertOne(block);
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    const raced = await collection(core.db, instanceDomainBlocks).findOne({ domain });
    if (raced) throw existingDomainBlockError(raced);
    throw err;
  }
  invalidateDomainRules(core);
  await runHooks(core, { kind: 'created', block, previous: null, actor });
  return block;
}

export async function updateDomainBlock(
  core: Core,
  id: Id,
  input: Omit<DomainBlockInput, 'domain'>,
  actor: Actor,
): Promise<DomainBlockDoc> {
  const previous = orNotFound(await collection(core.db, instanceDomainBlocks).findOne({ _id: id }));
  const set: Partial<DomainBlockDoc> = { updatedAt: new Date() };
  const severity = checkSeverity(input.severity);
  if (severity !== undefined) set.severity = severity;
  if (input.rejectMedia !== undefined) set.rejectMedia = input.rejectMedia;
  if (input.rejectReports !== undefined) set.rejectReports = input.rejectReports;
  if (input.obfuscate !== undefined) set.obfuscate = input.obfuscate;
  const privateComment = checkComment('Private comment', input.privateComment);
  if (privateComment !== undefined) set.privateComment = privateComment;
  const publicComment = checkComment('Public comment', input.publicComment);
  if (publicComment !== undefined) set.publicComment = publicComment;
  const block = await collection(core.db, instanceDomainBlocks).findOneAndUpdate(
    { _id: id },
    { $set: set },
    { returnDocument: 'after' },
  );
  if (!block) throw notFound();
  invalidateDomainRules(core);
  await runHooks(core, { kind: 'updated', block, previous, actor });
  return block;
}

export async function deleteDomainBlock(core: Core, id: Id, actor: Actor): Promise<DomainBlockDoc> {
  const block = orNotFound(await collection(core.db, instanceDomainBlocks).findOneAndDelete({ _id: id }));
  invalidateDomainRules(core);
  await runHooks(core, { kind: 'deleted', block, previous: null, actor });
  return block;
}

export async function getDomainBlock(core: Core, id: Id): Promise<DomainBlockDoc> {
  return orNotFound(await collection(core.db, instanceDomainBlocks).findOne({ _id: id }));
}

/** The exact rule for a domain (not a parent's); for the command line's unblock. */
export async function domainBlockByDomain(core: Core, input: string): Promise<DomainBlockDoc | null> {
  const domain = normalizeDomain(input);
  if (!domain) return null;
  return collection(core.db, instanceDomainBlocks).findOne({ domain });
}
