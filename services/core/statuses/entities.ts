// Resolves what the text of a local status refers to: mentioned accounts (local, or remote ones
// already known; unknown remote accounts stay plain text until federation resolves them) and
// hashtags (found or created in `tags`). Renders the HTML with them.
import { resolveAccountByAcct } from '../activitypub/resolve.ts';
import type { Core } from '../context.ts';
import { nextSerialId } from '../ids.ts';
import { collection, insertOrTwin } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { tags, type TagDoc } from '../model/tags.ts';
import { tagsByNames } from '../tags/byNames.ts';
import type { StatusMention, StatusTag } from '../model/statuses.ts';
import { extractEntities, normalizeTagName } from '../text/extract.ts';
import { formatStatusHtml } from '../text/formatStatus.ts';
import { tagUrl } from './urls.ts';

export interface ProcessedText {
  content: string;
  mentions: StatusMention[];
  tags: StatusTag[];
}

const MAX_MENTIONS = 50;
const MAX_TAGS = 50;

function isLocalDomain(core: Core, domain: string): boolean {
  const ours = [core.config.localDomain, core.config.webDomain].map((d) => d.toLowerCase());
  if (ours.includes(domain)) return true;
  // A handle without a port names us when we serve on one (@alice@localhost for localhost:3000);
  // with another port it is another server on this machine.
  return !domain.includes(':') && ours.some((d) => d.replace(/:\d+$/, '') === domain);
}

function mentionKey(username: string, domain: string | null): string {
  return `${username.toLowerCase()}@${domain ?? ''}`;
}

async function resolveMentionedAccounts(core: Core, text: string): Promise<Map<string, AccountDoc>> {
  const wanted = new Map<string, { usernameLower: string; domain: string | null }>();
  for (const e of extractEntities(text)) {
    if (e.kind !== 'mention') continue;
    const domain = e.domain && isLocalDomain(core, e.domain) ? null : e.domain;
    wanted.set(mentionKey(e.username, e.domain), { usernameLower: e.username.toLowerCase(), domain });
    if (wanted.size >= MAX_MENTIONS) break;
  }
  const found = new Map<string, AccountDoc>();
  if (wanted.size === 0) return found;
  const docs = await collection(core.db, accounts)
    .find({ $or: [...wanted.values()].map((w) => ({ usernameLower: w.usernameLower, domain: w.domain })) })
    .toArray();
  for (const [key, w] of wanted) {
    // Unconfirmed and unapproved local accounts are not mentionable (Mastodon's ProcessMentionsService).
    const doc = docs.find(
      (d) => d.usernameLower === w.usernameLower && d.domain === w.domain && !d.suspendedAt && !d.pendingUser,
    );
    if (doc) found.set(key, doc);
  }
  // Remote accounts not known yet are resolved (WebFinger, then the actor), as Mastodon does.
  const unknown = [...wanted].filter(([key, w]) => w.domain !== null && !found.has(key)).slice(0, 5);
  await Promise.all(
    unknown.map(async ([key, w]) => {
      const doc = await resolveAccountByAcct(core, `${w.usernameLower}@${w.domain}`).catch(() => null);
      if (doc && !doc.suspendedAt) found.set(key, doc);
    }),
  );
  return found;
}

export async function findOrCreateTag(core: Core, name: string): Promise<TagDoc> {
  const coll = collection(core.db, tags);
  const nameNormalized = normalizeTagName(name);
  const [existing] = await tagsByNames(core, [nameNormalized]);
  if (existing) return existing;
  const now = new Date();
  const doc: TagDoc = {
    _id: await nextSerialId(core.db, 'tags'),
    name,
    nameNormalized,
    createdAt: now,
    updatedAt: now,
  };
  return insertOrTwin(coll, doc, { nameNormalized });
}

export async function processStatusText(core: Core, text: string): Promise<ProcessedText> {
  const accountsByKey = await resolveMentionedAccounts(core, text);
  const byUsername = new Map<string, number>();
  for (const a of new Set(accountsByKey.values()))
    byUsername.set(a.usernameLower, (byUsername.get(a.usernameLower) ?? 0) + 1);
  const mentions: StatusMention[] = [];
  const content = formatStatusHtml(text, {
    baseUrl: tagUrl(core.config, '').replace(/\/tags\/$/, ''),
    resolveMention(username, domain) {
      const account = accountsByKey.get(mentionKey(username, domain));
      if (!account) return null;
      const acct = account.domain ? `${account.username}@${account.domain}` : account.username;
      if (!mentions.some((m) => m.accountId === account._id)) {
        mentions.push({ accountId: account._id, username: account.username, acct, url: account.url });
      }
      const ambiguous = (byUsername.get(account.usernameLower) ?? 0) > 1;
      return { url: account.url, display: ambiguous ? acct : account.username };
    },
  });
  const seen = new Set<string>();
  const tagList: StatusTag[] = [];
  for (const e of extractEntities(text)) {
    if (e.kind !== 'hashtag') continue;
    const normalized = normalizeTagName(e.name);
    if (seen.has(normalized) || seen.size >= MAX_TAGS) continue;
    seen.add(normalized);
    const tag = await findOrCreateTag(core, e.name);
    tagList.push({ id: tag._id, name: e.name });
  }
  return { content, mentions, tags: tagList };
}

export function tagNamesOf(list: StatusTag[]): string[] {
  return list.map((t) => normalizeTagName(t.name));
}
