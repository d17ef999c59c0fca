// Who may feature an account in a collection (Mastodon 4.6 Account::InteractionPolicyConcern):
// a local account consents automatically when it is discoverable (its actor publishes
// `interactionPolicy.canFeature` accordingly), a remote one by the policy its actor published.
// `feature_approval` on the Account entity shows both sub-policies and, per viewer, the outcome.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { follows } from '../model/follows.ts';
import type { AccountDoc, FeaturePolicy, FeaturePolicyKey } from '../model/accounts.ts';
import { asArray, idOf, obj, type JsonObject } from '../activitypub/json.ts';
import { PUBLIC_FORMS } from '../activitypub/uris.ts';

export type FeatureApproval = 'automatic' | 'manual' | 'denied' | 'missing' | 'unknown';

type PolicyFields = Pick<AccountDoc, '_id' | 'domain' | 'discoverable' | 'locked' | 'featurePolicy'>;

/** One sub-policy as Mastodon renders it (`feature_policy_as_keys`). */
export function featurePolicyKeys(doc: PolicyFields, kind: 'automatic' | 'manual'): FeaturePolicyKey[] {
  if (doc.domain === null) {
    if (kind === 'manual' || !doc.discoverable) return [];
    return [doc.locked ? 'followers' : 'public'];
  }
  return [...(doc.featurePolicy?.[kind] ?? [])];
}

/** The viewer's relations to the target that a `followers`/`following` policy asks about. */
export interface FeatureRelation {
  /** The viewer follows the target. */
  viewerFollows: boolean;
  /** The target follows the viewer. */
  followsViewer: boolean;
}

/** Whether the outcome for a viewer depends on follows (only remote followers/following policies). */
export function needsRelation(doc: PolicyFields): boolean {
  if (doc.domain === null || !doc.featurePolicy) return false;
  const all = [...doc.featurePolicy.automatic, ...doc.featurePolicy.manual];
  return !all.includes('public') && (all.includes('followers') || all.includes('following'));
}

/** Mastodon's `feature_policy_for_account`: may `viewerId` feature `doc`, and how. */
export function featureApprovalFor(
  doc: PolicyFields,
  viewerId: Id | null,
  relation: FeatureRelation = { viewerFollows: false, followsViewer: false },
): FeatureApproval {
  if (viewerId === null || (doc.domain === null && !doc.discoverable)) return 'denied';
  if (doc.domain === null) return 'automatic';
  if (doc._id === viewerId) return 'automatic';
  const policy = doc.featurePolicy;
  // No policy, or one that names nobody (Mastodon: an empty bitmap), is "missing".
  if (!policy || policy.automatic.length + policy.manual.length === 0) return 'missing';
  const allows = (keys: FeaturePolicyKey[]) =>
    keys.includes('public') ||
    (keys.includes('followers') && relation.viewerFollows) ||
    (keys.includes('following') && relation.followsViewer);
  if (allows(policy.automatic)) return 'automatic';
  if (allows(policy.manual)) return 'manual';
  if ([...policy.automatic, ...policy.manual].includes('unsupported_policy')) return 'unknown';
  return 'denied';
}

/** The outcome for `viewerId` of each account, reading follows only where a policy needs them. */
export async function featureApprovalsFor(
  core: Core,
  docs: readonly PolicyFields[],
  viewerId: Id | null,
): Promise<Map<Id, FeatureApproval>> {
  const out = new Map<Id, FeatureApproval>();
  const related = viewerId === null ? [] : docs.filter((d) => d._id !== viewerId && needsRelation(d)).map((d) => d._id);
  const viewerFollows = new Set<Id>();
  const followsViewer = new Set<Id>();
  if (related.length > 0 && viewerId !== null) {
    const rows = await collection(core.db, follows)
      .find(
        {
          $or: [
            { accountId: viewerId, targetAccountId: { $in: related } },
            { accountId: { $in: related }, targetAccountId: viewerId },
          ],
        },
        { projection: { accountId: 1, targetAccountId: 1 } },
      )
      .toArray();
    for (const r of rows) {
      if (r.accountId === viewerId) viewerFollows.add(r.targetAccountId);
      else followsViewer.add(r.accountId);
    }
  }
  for (const d of docs)
    out.set(
      d._id,
      featureApprovalFor(d, viewerId, {
        viewerFollows: viewerFollows.has(d._id),
        followsViewer: followsViewer.has(d._id),
      }),
    );
  return out;
}

/**
 * A remote actor's `interactionPolicy.canFeature` (null when it publishes none: "missing"). Each
 * approval list names the public collection, the actor's followers or following collection, or
 * the actor itself (always allowed, so not a key); anything else is a policy we cannot evaluate.
 */
export function parseCanFeature(actor: JsonObject): FeaturePolicy | null {
  const canFeature = obj(obj(actor.interactionPolicy)?.canFeature);
  if (!canFeature) return null;
  const keysOf = (value: unknown): FeaturePolicyKey[] => {
    const keys = new Set<FeaturePolicyKey>();
    for (const entry of asArray(value).slice(0, 50)) {
      const uri = idOf(entry);
      if (!uri || uri === actor.id) continue;
      if (PUBLIC_FORMS.has(uri)) keys.add('public');
      else if (uri === idOf(actor.followers)) keys.add('followers');
      else if (uri === idOf(actor.following)) keys.add('following');
      else keys.add('unsupported_policy');
    }
    return [...keys];
  };
  return { automatic: keysOf(canFeature.automaticApproval), manual: keysOf(canFeature.manualApproval) };
}

/** The `canFeature` a local actor publishes (Mastodon's ActorSerializer#interaction_policy). */
export function localCanFeature(
  doc: Pick<AccountDoc, 'discoverable' | 'locked'>,
  uris: { actor: string; followers: string },
  publicUri: string,
): { automaticApproval: string[] } {
  const who = !doc.discoverable ? uris.actor : doc.locked ? uris.followers : publicUri;
  return { automaticApproval: [who] };
}
