// Domain allows (Mastodon's DomainAllow): in limited federation mode, the only servers this one
// federates with. The rules are enforced through domainBlocks.ts's snapshot (findDomainAllow).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOrTwin } from '../db/mongo.ts';
import { orNotFound, validationFailed } from '../errors.ts';
import { domainAllows, type DomainAllowDoc } from '../model/instanceDomainBlocks.ts';
import { logAdminAction } from '../users/moderation.ts';
import { invalidateDomainRules, normalizeDomain, type Actor } from './domainBlocks.ts';

export function renderAdminDomainAllow(allow: DomainAllowDoc) {
  return { id: String(allow._id), domain: allow.domain, created_at: allow.createdAt.toISOString() };
}

/** Allows a domain (limited-federation mode); the existing allow when it is already there. */
export async function createDomainAllow(
  core: Core,
  input: string | undefined,
  actor: Actor = null,
): Promise<DomainAllowDoc> {
  if (input === undefined || input.trim() === '') throw validationFailed("Domain can't be blank");
  const domain = normalizeDomain(input);
  if (!domain) throw validationFailed('Domain is not a valid domain name');
  const coll = collection(core.db, domainAllows);
  const existing = await coll.findOne({ domain });
  if (existing) return existing;
  const now = new Date();
  const doc: DomainAllowDoc = {
    _id: await nextSerialId(core.db, 'domain_allows'),
    domain,
    createdAt: now,
    updatedAt: now,
  };
  const allow = await insertOrTwin(coll, doc, { domain });
  if (allow !== doc) return allow; // a concurrent call allowed it first
  invalidateDomainRules(core);
  await logDomainAllow(core, 'create', allow, actor);
  return allow;
}

async function logDomainAllow(core: Core, action: string, allow: DomainAllowDoc, actor: Actor): Promise<void> {
  await logAdminAction(core, actor, action, { type: 'DomainAllow', id: allow._id, name: allow.domain });
}

export async function getDomainAllow(core: Core, id: Id): Promise<DomainAllowDoc> {
  return orNotFound(await collection(core.db, domainAllows).findOne({ _id: id }));
}

export async function deleteDomainAllow(core: Core, id: Id, actor: Actor = null): Promise<DomainAllowDoc> {
  const allow = orNotFound(await collection(core.db, domainAllows).findOneAndDelete({ _id: id }));
  invalidateDomainRules(core);
  await logDomainAllow(core, 'destroy', allow, actor);
  return allow;
}
