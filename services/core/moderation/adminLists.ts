// The records the admin list pages show, in the order they list them, at most `limit` of each:
// e-mail domain blocks, IP rules, domain blocks and domain allows.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { emailDomainBlocks, ipBlocks, type EmailDomainBlockDoc, type IpBlockDoc } from '../model/signUpBlocks.ts';
import {
  domainAllows,
  instanceDomainBlocks,
  type DomainAllowDoc,
  type DomainBlockDoc,
} from '../model/instanceDomainBlocks.ts';

/** E-mail domain blocks by domain; the MX variants recorded with a block (parentId set) left out. */
export function listedEmailDomainBlocks(core: Core, limit: number): Promise<EmailDomainBlockDoc[]> {
  return collection(core.db, emailDomainBlocks).find({ parentId: null }).sort({ domain: 1 }).limit(limit).toArray();
}

/** IP rules by address. */
export function listedIpBlocks(core: Core, limit: number): Promise<IpBlockDoc[]> {
  return collection(core.db, ipBlocks).find({}).sort({ ip: 1 }).limit(limit).toArray();
}

/** Domain blocks by domain. */
export function listedDomainBlocks(core: Core, limit: number): Promise<DomainBlockDoc[]> {
  return collection(core.db, instanceDomainBlocks).find({}).sort({ domain: 1 }).limit(limit).toArray();
}

/** Domain allows (limited federation mode) by domain. */
export function listedDomainAllows(core: Core, limit: number): Promise<DomainAllowDoc[]> {
  return collection(core.db, domainAllows).find({}).sort({ domain: 1 }).limit(limit).toArray();
}
