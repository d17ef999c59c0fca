// Who may quote a status (Mastodon 4.5's Status::InteractionPolicyConcern): the policy is a number
// holding the automatic-approval flags in its high 16 bits and the manual-approval flags in its
// low 16 bits. A client chooses `public`, `followers` or `nobody`; remote posts may carry other
// actors, kept as `unsupported_policy`.
import type { Id } from '../ids.ts';
import type { StatusDoc } from '../model/statuses.ts';

export const QUOTE_POLICY_FLAGS = {
  unsupported_policy: 1 << 0,
  public: 1 << 1,
  followers: 1 << 2,
  following: 1 << 3,
} as const;
type FlagName = keyof typeof QUOTE_POLICY_FLAGS;

export const QUOTE_POLICY_SETTINGS = ['public', 'followers', 'nobody'] as const;
export type QuotePolicySetting = (typeof QUOTE_POLICY_SETTINGS)[number];

export function isQuotePolicySetting(v: unknown): v is QuotePolicySetting {
  return typeof v === 'string' && (QUOTE_POLICY_SETTINGS as readonly string[]).includes(v);
}

/** The stored policy of a setting (`public`/`followers`: automatic approval; `nobody`: none). */
export function policyOfSetting(setting: QuotePolicySetting): number {
  if (setting === 'public') return QUOTE_POLICY_FLAGS.public << 16;
  if (setting === 'followers') return QUOTE_POLICY_FLAGS.followers << 16;
  return 0;
}

/** A local status's policy: Mastodon downgrades it to nobody when the status is not public or unlisted. */
export function localStatusPolicy(setting: QuotePolicySetting, visibility: StatusDoc['visibility']): number {
  return visibility === 'public' || visibility === 'unlisted' ? policyOfSetting(setting) : 0;
}

/** The flag names of one half of a policy (`quote_approval.automatic` / `.manual`). */
export function policyKeys(policy: number, kind: 'automatic' | 'manual'): string[] {
  const half = kind === 'automatic' ? policy >>> 16 : policy & 0xffff;
  return (Object.keys(QUOTE_POLICY_FLAGS) as FlagName[]).filter((k) => (half & QUOTE_POLICY_FLAGS[k]) !== 0);
}

export type QuoteDecision = 'automatic' | 'manual' | 'unknown' | 'denied';

/** What the status's policy says about `accountId` quoting it. */
export interface PolicySubject {
  accountId: Id;
  visibility: StatusDoc['visibility'];
  reblogOfId: Id | null;
  quoteApprovalPolicy?: number;
}

/**
 * Mastodon's quote_policy_for_account. `follows` says whether the account follows the author
 * (asked only when the policy names followers); `followedBy` whether the author follows it.
 */
export function quoteDecision(
  status: PolicySubject,
  accountId: Id | null,
  relation: { follows?: boolean; followedBy?: boolean } = {},
): QuoteDecision {
  if (accountId === null || status.visibility === 'direct' || status.reblogOfId !== null) return 'denied';
  if (status.accountId === accountId) return 'automatic';
  const policy = status.quoteApprovalPolicy ?? 0;
  const automatic = policy >>> 16;
  const manual = policy & 0xffff;
  const granted = (half: number): boolean =>
    (half & QUOTE_POLICY_FLAGS.public) !== 0 ||
    ((half & QUOTE_POLICY_FLAGS.followers) !== 0 && relation.follows === true) ||
    ((half & QUOTE_POLICY_FLAGS.following) !== 0 && relation.followedBy === true);
  if (granted(automatic)) return 'automatic';
  if (granted(manual)) return 'manual';
  if (((automatic | manual) & QUOTE_POLICY_FLAGS.unsupported_policy) !== 0) return 'unknown';
  return 'denied';
}

/** Whether deciding for someone other than the author needs to know if they follow the author. */
export function needsFollowRelation(status: PolicySubject, accountId: Id | null): boolean {
  if (accountId === null || accountId === status.accountId) return false;
  if (status.visibility === 'direct' || status.reblogOfId !== null) return false;
  const policy = status.quoteApprovalPolicy ?? 0;
  if (((policy >>> 16) & QUOTE_POLICY_FLAGS.public) !== 0) return false;
  return ((policy >>> 16) | (policy & 0xffff)) & QUOTE_POLICY_FLAGS.followers ? true : false;
}

/** The Status entity's `quote_approval`. */
export interface QuoteApproval {
  automatic: string[];
  manual: string[];
  current_user: QuoteDecision;
}

export function presentQuoteApproval(
  status: PolicySubject,
  viewerId: Id | null,
  relation: { follows?: boolean } = {},
): QuoteApproval {
  return quoteApprovalFor(status.quoteApprovalPolicy ?? 0, quoteDecision(status, viewerId, relation));
}

/** `quote_approval` for a stored policy and the viewer's decision under it. */
export function quoteApprovalFor(policy: number, decision: QuoteDecision): QuoteApproval {
  return { automatic: policyKeys(policy, 'automatic'), manual: policyKeys(policy, 'manual'), current_user: decision };
}

/**
 * A remote post's `interactionPolicy.canQuote` as a stored policy (Mastodon's parser): Public,
 * the author's followers or following collections become flags; the author alone means nothing
 * more; any other actor marks the policy `unsupported_policy`.
 */
export function policyFromInteractionPolicy(
  value: unknown,
  author: { uri: string; followersUrl: string; followingUrl?: string | null },
): number {
  const policy = value && typeof value === 'object' ? (value as Record<string, unknown>).canQuote : undefined;
  if (!policy || typeof policy !== 'object') return 0;
  const half = (sub: unknown): number => {
    let flags = 0;
    const list = (Array.isArray(sub) ? sub : sub === undefined || sub === null ? [] : [sub]).map((v) =>
      typeof v === 'string' ? v : v && typeof v === 'object' ? (v as { id?: unknown }).id : null,
    );
    for (const actor of new Set(list)) {
      if (actor === 'as:Public' || actor === 'Public' || actor === 'https://www.w3.org/ns/activitystreams#Public')
        flags |= QUOTE_POLICY_FLAGS.public;
      else if (actor === author.followersUrl) flags |= QUOTE_POLICY_FLAGS.followers;
      else if (author.followingUrl && actor === author.followingUrl) flags |= QUOTE_POLICY_FLAGS.following;
      else if (actor !== author.uri) flags |= QUOTE_POLICY_FLAGS.unsupported_policy;
    }
    return flags;
  };
  const p = policy as Record<string, unknown>;
  return ((half(p.automaticApproval) << 16) | half(p.manualApproval)) >>> 0;
}
