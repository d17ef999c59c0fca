// The Relationship entity (specification: Relationship; reference: entities). There is no
// `blocked_by`: the specification removed it.
import { Type, type Static } from '@sinclair/typebox';
import type { Core } from '../context.ts';
import type { CachedAccount } from '../model/accounts.ts';
import { relationshipFacts, type RelationshipFacts, type RelationshipTarget } from '../graph/relationships.ts';

export const RelationshipEntity = Type.Object({
  id: Type.String(),
  following: Type.Boolean(),
  showing_reblogs: Type.Boolean(),
  notifying: Type.Boolean(),
  languages: Type.Union([Type.Array(Type.String()), Type.Null()]),
  followed_by: Type.Boolean(),
  blocking: Type.Boolean(),
  muting: Type.Boolean(),
  muting_notifications: Type.Boolean(),
  requested: Type.Boolean(),
  requested_by: Type.Boolean(),
  domain_blocking: Type.Boolean(),
  endorsed: Type.Boolean(),
  note: Type.String(),
});
export type Relationship = Static<typeof RelationshipEntity>;

export function relationshipOf(f: RelationshipFacts): Relationship {
  const edge = f.following ?? f.requested;
  return {
    id: String(f.id),
    following: f.following !== null,
    showing_reblogs: edge?.showReblogs ?? false,
    notifying: edge?.notify ?? false,
    languages: edge?.languages ?? null,
    followed_by: f.followedBy,
    blocking: f.blocking,
    muting: f.muting !== null,
    muting_notifications: f.muting?.hideNotifications ?? false,
    requested: f.requested !== null,
    requested_by: f.requestedBy,
    domain_blocking: f.domainBlocking,
    endorsed: f.endorsed,
    note: f.note,
  };
}

export async function presentRelationships(
  core: Core,
  viewer: CachedAccount,
  targets: readonly RelationshipTarget[],
): Promise<Relationship[]> {
  return (await relationshipFacts(core, viewer, targets)).map(relationshipOf);
}

export async function presentRelationship(
  core: Core,
  viewer: CachedAccount,
  target: RelationshipTarget,
): Promise<Relationship> {
  const [one] = await presentRelationships(core, viewer, [target]);
  return one as Relationship;
}
