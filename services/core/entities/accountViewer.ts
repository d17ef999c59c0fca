// The per-viewer part of the Account entity (Mastodon 4.6 `feature_approval.current_user`). The
// entity itself is rendered for no viewer and cached per account (statusPage.ts authorView); this
// lays the viewer's outcome over copies, reading follows only for the remote accounts whose
// policy names followers or following.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import type { FeaturePolicyKey } from '../model/accounts.ts';
import { featureApprovalsFor } from '../featuredCollections/featurePolicy.ts';
import type { Account } from './account.ts';

/**
 * What the policy needs, read back from a rendered entity (remote: `acct` names a domain); once
 * per cached entity (every page reads it for each of its authors).
 */
const policyFields = new WeakMap<Account, ReturnType<typeof readPolicyFields>>();

function policyFieldsOf(a: Account) {
  let fields = policyFields.get(a);
  if (fields === undefined) policyFields.set(a, (fields = readPolicyFields(a)));
  return fields;
}

function readPolicyFields(a: Account) {
  const remote = a.acct.includes('@');
  return {
    _id: BigInt(a.id),
    domain: remote ? a.acct.slice(a.acct.indexOf('@') + 1) : null,
    discoverable: a.discoverable === true,
    locked: a.locked,
    featurePolicy: remote
      ? {
          automatic: a.feature_approval.automatic as FeaturePolicyKey[],
          manual: a.feature_approval.manual as FeaturePolicyKey[],
        }
      : null,
  };
}

/** Copies of `list` with `feature_approval.current_user` as `viewerId` sees it. */
export async function withViewerFeatureApproval<T extends Account>(
  core: Core,
  list: readonly T[],
  viewerId: Id | null,
): Promise<T[]> {
  if (viewerId === null) return [...list];
  const fields = list.map(policyFieldsOf);
  const outcome = await featureApprovalsFor(core, fields, viewerId);
  return list.map((a, i) => withOutcome(a, outcome.get(fields[i]._id) ?? 'denied'));
}

/**
 * One copy per cached entity and outcome, so a cached entity keeps one identity per outcome (the
 * spliced page JSON caches each author's text by entity: statusPageJson.ts).
 */
const copies = new WeakMap<Account, Map<string, Account>>();

function withOutcome<T extends Account>(a: T, current: string): T {
  if (a.feature_approval.current_user === current) return a;
  let byOutcome = copies.get(a);
  if (!byOutcome) copies.set(a, (byOutcome = new Map()));
  let copy = byOutcome.get(current) as T | undefined;
  if (!copy) {
    copy = { ...a, feature_approval: { ...a.feature_approval, current_user: current } };
    byOutcome.set(current, copy);
  }
  return copy;
}

/** One account, as `withViewerFeatureApproval`. */
export async function withViewerFeatureApprovalOne<T extends Account>(
  core: Core,
  account: T,
  viewerId: Id | null,
): Promise<T> {
  return (await withViewerFeatureApproval(core, [account], viewerId))[0];
}
