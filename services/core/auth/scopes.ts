// OAuth scopes as Mastodon 4.4 has them (plus 4.6's read:collections and write:collections). A route lists the scopes it accepts; a token passes when
// it holds any of them directly or through a parent (`read` covers `read:statuses`; the deprecated
// `follow` covers the follow-related read and write scopes).
export const SCOPES_SUPPORTED = [
  'read',
  'write',
  'write:accounts',
  'write:blocks',
  'write:bookmarks',
  'write:collections',
  'write:conversations',
  'write:favourites',
  'write:filters',
  'write:follows',
  'write:lists',
  'write:media',
  'write:mutes',
  'write:notifications',
  'write:reports',
  'write:statuses',
  'read:accounts',
  'read:blocks',
  'read:bookmarks',
  'read:collections',
  'read:favourites',
  'read:filters',
  'read:follows',
  'read:lists',
  'read:mutes',
  'read:notifications',
  'read:search',
  'read:statuses',
  'follow',
  'push',
  'profile',
  'admin:read',
  'admin:read:accounts',
  'admin:read:reports',
  'admin:read:domain_allows',
  'admin:read:domain_blocks',
  'admin:read:ip_blocks',
  'admin:read:email_domain_blocks',
  'admin:read:canonical_email_blocks',
  'admin:write',
  'admin:write:accounts',
  'admin:write:reports',
  'admin:write:domain_allows',
  'admin:write:domain_blocks',
  'admin:write:ip_blocks',
  'admin:write:email_domain_blocks',
  'admin:write:canonical_email_blocks',
] as const;

export type Scope = (typeof SCOPES_SUPPORTED)[number];

const FOLLOW_CHILDREN = ['read:blocks', 'read:follows', 'read:mutes', 'write:blocks', 'write:follows', 'write:mutes'];

/** Scopes that grant powers beyond the user's own content; shown apart on the consent page. */
export const DANGEROUS_SCOPES = new Set<string>(SCOPES_SUPPORTED.filter((s) => s.startsWith('admin:')));

export function isKnownScope(scope: string): scope is Scope {
  return (SCOPES_SUPPORTED as readonly string[]).includes(scope);
}

/** Parses a space- or plus-separated scope string; empty means Mastodon's default, `read`. */
export function parseScopes(value: string | undefined | null): string[] {
  const list = (value ?? '').split(/[\s+]+/).filter(Boolean);
  return list.length === 0 ? ['read'] : [...new Set(list)];
}

/**
 * The expansions made so far, by the granted list itself (a token's cached copy is shared between
 * requests) and by its text: every API request checks its token's scopes, and a token has few.
 */
const expandedLists = new WeakMap<readonly string[], ReadonlySet<string>>();
const expandedTexts = new Map<string, ReadonlySet<string>>();

/** Every scope a granted set implies, including itself. */
export function expandScopes(granted: readonly string[]): ReadonlySet<string> {
  let out = expandedLists.get(granted);
  if (out) return out;
  const text = granted.join(' ');
  out = expandedTexts.get(text);
  if (!out) {
    // Scope sets are few (apps ask for the same ones); a bound keeps odd ones from growing it.
    if (expandedTexts.size >= 1000) expandedTexts.clear();
    expandedTexts.set(text, (out = expansionOf(granted)));
  }
  if (Object.isFrozen(granted)) expandedLists.set(granted, out);
  return out;
}

function expansionOf(granted: readonly string[]): ReadonlySet<string> {
  const out = new Set<string>();
  for (const g of granted) {
    out.add(g);
    if (g === 'follow') FOLLOW_CHILDREN.forEach((c) => out.add(c));
    for (const s of SCOPES_SUPPORTED) if (s.startsWith(`${g}:`)) out.add(s);
  }
  return out;
}

/** True when the granted scopes satisfy any of the accepted ones. */
export function scopesAllow(granted: readonly string[], accepted: readonly string[]): boolean {
  if (accepted.length === 0) return true;
  const have = expandScopes(granted);
  return accepted.some((s) => have.has(s));
}

/** True when every requested scope is within what an app registered (for authorize and token requests). */
export function scopesWithin(requested: readonly string[], registered: readonly string[]): boolean {
  const have = expandScopes(registered);
  return requested.every((s) => have.has(s));
}
