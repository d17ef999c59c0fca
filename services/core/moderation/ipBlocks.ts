// IP rules (Mastodon's IpBlock): a CIDR range with a severity — sign-ups from it need approval,
// sign-ups from it are refused, or it may not use the server at all. Expired rules no longer apply.
// Matching reads a per-process snapshot refreshed every few seconds (dropped at once on change here).
import { isIP } from 'node:net';
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, insertUnique, isDuplicateKeyError } from '../db/mongo.ts';
import { ipBlocks, IP_BLOCK_SEVERITIES, type IpBlockDoc, type IpBlockSeverity } from '../model/signUpBlocks.ts';
import { notFound, orNotFound, validationFailed } from '../errors.ts';
import { logAdminAction, type Actor } from '../users/moderation.ts';
import { TtlCache } from '../cache/ttlCache.ts';

export type { IpBlockDoc, IpBlockSeverity };

interface ParsedIp {
  family: 4 | 6;
  value: bigint;
}

function parseIpv4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    value = (value << 8n) | BigInt(Number(p));
  }
  return value;
}

function parseIpv6(text: string): bigint | null {
  let s = text.toLowerCase();
  // A trailing dotted IPv4 (::ffff:1.2.3.4) becomes two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const n = parseIpv4(v4[1]);
    if (n === null) return null;
    s = s.slice(0, -v4[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  let value = 0n;
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return value;
}

/** Parses an address; IPv4-mapped IPv6 addresses count as IPv4. */
export function parseIp(text: string): ParsedIp | null {
  const t = text.trim();
  const kind = isIP(t);
  if (kind === 4) {
    const v = parseIpv4(t);
    return v === null ? null : { family: 4, value: v };
  }
  if (kind === 6) {
    const v = parseIpv6(t);
    if (v === null) return null;
    if (v >> 32n === 0xffffn) return { family: 4, value: v & 0xffffffffn };
    return { family: 6, value: v };
  }
  return null;
}

function formatIp(ip: ParsedIp): string {
  if (ip.family === 4) {
    return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join('.');
  }
  const groups = Array.from({ length: 8 }, (_, i) => ((ip.value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // Longest run of zero groups becomes `::`.
  let best = { start: -1, len: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len && j - i > 1) best = { start: i, len: j - i };
    i = j;
  }
  if (best.start < 0) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.len).join(':')}`;
}

interface ParsedRange extends ParsedIp {
  prefix: number;
}

/** `a.b.c.d/n` or an address (a single-address range); the network address is masked. null if invalid. */
export function parseCidr(text: string): ParsedRange | null {
  const [addr, prefixText, ...rest] = text.trim().split('/');
  if (rest.length > 0 || addr === undefined) return null;
  const ip = parseIp(addr);
  if (!ip) return null;
  const bits = ip.family === 4 ? 32 : 128;
  let prefix = bits;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) return null;
    prefix = Number(prefixText);
    if (prefix > bits) return null;
  }
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix);
  return { family: ip.family, value: ip.value & mask, prefix };
}

export function formatCidr(range: ParsedRange): string {
  return `${formatIp(range)}/${range.prefix}`;
}

function rangeContains(range: ParsedRange, ip: ParsedIp): boolean {
  if (range.family !== ip.family) return false;
  const bits = range.family === 4 ? 32 : 128;
  const shift = BigInt(bits - range.prefix);
  return ip.value >> shift === range.value >> shift;
}

// ---------------------------------------------------------------------------------------------
// Matching (cached)

const CACHE_MS = 5_000;
const snapshots = new TtlCache<string, { range: ParsedRange; doc: IpBlockDoc }[]>(CACHE_MS, 100);

function invalidate(core: Core): void {
  snapshots.delete(core.db.databaseName);
}

async function rules(core: Core) {
  const key = core.db.databaseName;
  const cached = snapshots.get(key);
  if (cached) return cached;
  const docs = await collection(core.db, ipBlocks).find({}).toArray();
  const parsed = docs
    .map((doc) => ({ range: parseCidr(doc.ip), doc }))
    .filter((r): r is { range: ParsedRange; doc: IpBlockDoc } => r.range !== null);
  snapshots.set(key, parsed);
  return parsed;
}

/** The severities of the unexpired rules covering an address. */
export async function ipSeverities(core: Core, address: string | null | undefined): Promise<Set<IpBlockSeverity>> {
  const out = new Set<IpBlockSeverity>();
  if (!address) return out;
  // Most instances have no rules: every request asks, so the address is parsed only when needed.
  const all = await rules(core);
  if (all.length === 0) return out;
  const ip = parseIp(address);
  if (!ip) return out;
  const now = Date.now();
  for (const r of all) {
    if (r.doc.expiresAt && r.doc.expiresAt.getTime() <= now) continue;
    if (rangeContains(r.range, ip)) out.add(r.doc.severity);
  }
  return out;
}

/** What sign-up from an address gets: refused, approval queue, or nothing special. */
export async function signUpIpVerdict(
  core: Core,
  address: string | null | undefined,
): Promise<'allowed' | 'requires_approval' | 'blocked'> {
  const severities = await ipSeverities(core, address);
  if (severities.has('sign_up_block') || severities.has('no_access')) return 'blocked';
  if (severities.has('sign_up_requires_approval')) return 'requires_approval';
  return 'allowed';
}

// ---------------------------------------------------------------------------------------------
// Changes

export interface IpBlockInput {
  ip?: string;
  severity?: string;
  comment?: string;
  /** Seconds from now; null or 0 for never. */
  expiresIn?: number | null;
}

function checkSeverity(value: string | undefined): IpBlockSeverity | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(IP_BLOCK_SEVERITIES as readonly string[]).includes(value))
    throw validationFailed('Severity is not included in the list');
  return value as IpBlockSeverity;
}

function checkRange(value: string): string {
  const range = parseCidr(value);
  if (!range) throw validationFailed('Ip is invalid');
  return formatCidr(range);
}

function checkExpiry(expiresIn: number | null | undefined): Date | null | undefined {
  if (expiresIn === undefined) return undefined;
  if (expiresIn === null || expiresIn === 0) return null;
  if (!Number.isInteger(expiresIn) || expiresIn < 0 || expiresIn > 100 * 365 * 86_400)
    throw validationFailed('Expires in is not a valid number of seconds');
  return new Date(Date.now() + expiresIn * 1000);
}

const COMMENT_MAX = 1_000;

function checkComment(value: string | undefined): string | undefined {
  if (value !== undefined && value.length > COMMENT_MAX)
    throw validationFailed(`Comment is too long (maximum is ${COMMENT_MAX} characters)`);
  return value;
}

async function log(core: Core, action: string, block: IpBlockDoc, actor: Actor): Promise<void> {
  await logAdminAction(
    core,
    actor,
    action,
    { type: 'IpBlock', id: block._id, name: block.ip },
    { severity: block.severity },
  );
}

export async function createIpBlock(core: Core, input: IpBlockInput, actor: Actor): Promise<IpBlockDoc> {
  const severity = checkSeverity(input.severity);
  const ip = checkRange(input.ip === undefined || input.ip === '' ? '0.0.0.0/32' : input.ip);
  if (!severity) throw validationFailed("Severity can't be blank");
  const now = new Date();
  const block: IpBlockDoc = {
    _id: await nextSerialId(core.db, 'ip_blocks'),
    ip,
    severity,
    comment: checkComment(input.comment) ?? '',
    expiresAt: checkExpiry(input.expiresIn) ?? null,
    createdAt: now,
    updatedAt: now,
  };
  const coll = collection(core.db, ipBlocks);
  // An expired rule for the same range is replaced, as Mastodon purges expired rules.
  await coll.deleteOne({ ip, expiresAt: { $ne: null, $lte: now } });
  await insertUnique(coll, block, () => validationFailed('Ip has already been taken'));
  invalidate(core);
  await log(core, 'create', block, actor);
  return block;
}

export async function updateIpBlock(core: Core, id: Id, input: IpBlockInput, actor: Actor): Promise<IpBlockDoc> {
  const set: Partial<IpBlockDoc> = { updatedAt: new Date() };
  if (input.ip !== undefined && input.ip !== '') set.ip = checkRange(input.ip);
  const severity = checkSeverity(input.severity);
  if (severity) set.severity = severity;
  const comment = checkComment(input.comment);
  if (comment !== undefined) set.comment = comment;
  const expiresAt = checkExpiry(input.expiresIn);
  if (expiresAt !== undefined) set.expiresAt = expiresAt;
  let block: IpBlockDoc | null;
  try {
    block = await collection(core.db, ipBlocks).findOneAndUpdate(
      { _id: id },
      { $set: set },
      { returnDocument: 'after' },
    );
  } catch (err) {
    if (isDuplicateKeyError(err)) throw validationFailed('Ip has already been taken');
    throw err;
  }
  if (!block) throw notFound();
  invalidate(core);
  await log(core, 'update', block, actor);
  return block;
}

export async function getIpBlock(core: Core, id: Id): Promise<IpBlockDoc> {
  return orNotFound(await collection(core.db, ipBlocks).findOne({ _id: id }));
}

export async function deleteIpBlock(core: Core, id: Id, actor: Actor): Promise<void> {
  const block = orNotFound(await collection(core.db, ipBlocks).findOneAndDelete({ _id: id }));
  invalidate(core);
  await log(core, 'destroy', block, actor);
}

export function renderIpBlock(block: IpBlockDoc) {
  return {
    id: String(block._id),
    ip: block.ip,
    severity: block.severity,
    comment: block.comment,
    created_at: block.createdAt.toISOString(),
    expires_at: block.expiresAt ? block.expiresAt.toISOString() : null,
  };
}
