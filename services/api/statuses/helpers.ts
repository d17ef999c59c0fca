// Shared route helpers of the statuses area: status lookup with the visibility rule (404 exactly
// as for a missing status), id parsing.
import { idParam } from '../params.ts';
import type { FastifyRequest } from 'fastify';
import type { Core } from '../../core/context.ts';
import { parseId, type Id } from '../../core/ids.ts';
import type { CachedAccount } from '../../core/model/accounts.ts';
import type { StatusDoc } from '../../core/model/statuses.ts';
import { findVisibleStatus } from '../../core/statuses/visibility.ts';
import { notFound, validationFailed } from '../errors.ts';
import { VISIBILITIES, type Visibility } from '../../core/model/statuses.ts';

export { idParam };

export function viewerOf(request: FastifyRequest): CachedAccount | null {
  return request.auth?.account ?? null;
}

export async function visibleStatusOr404(core: Core, viewer: CachedAccount | null, rawId: string): Promise<StatusDoc> {
  const status = await findVisibleStatus(core, viewer, idParam(rawId));
  if (!status) throw notFound();
  return status;
}

export function idList(values: readonly string[] | null | undefined): Id[] {
  const out: Id[] = [];
  for (const v of values ?? []) {
    if (v === '') continue;
    const id = parseId(v);
    if (id === null) throw validationFailed('Media attachments are invalid');
    out.push(id);
  }
  return out;
}

export const READ = { scopes: ['read', 'read:statuses'], user: 'optional' as const };
export const WRITE = { scopes: ['write', 'write:statuses'], user: 'required' as const };

export function visibilityOf(value: string | null | undefined): Visibility | null {
  if (value === undefined || value === null || value === '') return null;
  if (!(VISIBILITIES as readonly string[]).includes(value))
    throw validationFailed('Visibility is not included in the list');
  return value as Visibility;
}
