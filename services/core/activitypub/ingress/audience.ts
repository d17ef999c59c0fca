// The mentions and hashtags of remote objects (Mention and Hashtag tags), for one object or many:
// the mentioned accounts in one query per kind (local by username, remote by uri) and the tags in
// one query (missing ones created). The one path of createRemoteStatus, updateRemoteStatus and
// their bulk forms (bulkStatuses.ts, bulkUpdates.ts).
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts, type AccountDoc } from '../../model/accounts.ts';
import type { StatusMention, StatusTag } from '../../model/statuses.ts';
import { tags as tagsCollection, type TagDoc } from '../../model/tags.ts';
import { findOrCreateTag } from '../../statuses/entities.ts';
import { normalizeTagName } from '../../text/extract.ts';
import { asArray, idOf, obj, type JsonObject } from '../json.ts';
import { isLocalUri, parseLocalUri } from '../uris.ts';

/** Accounts named by actor ids (`findAccountByUri` for many): local by username, remote by uri. */
export async function accountsByUri(core: Core, uris: string[]): Promise<Map<string, AccountDoc>> {
  const usernames = new Map<string, string[]>();
  const remote: string[] = [];
  for (const uri of new Set(uris)) {
    const parsed = parseLocalUri(core.config, uri);
    if (parsed?.kind === 'actor' || parsed?.kind === 'profile') {
      const u = parsed.username.toLowerCase();
      usernames.set(u, [...(usernames.get(u) ?? []), uri]);
    } else if (!isLocalUri(core.config, uri)) remote.push(uri);
  }
  const coll = collection(core.db, accounts);
  const [ours, theirs] = await Promise.all([
    usernames.size > 0 ? coll.find({ usernameLower: { $in: [...usernames.keys()] }, domain: null }).toArray() : [],
    remote.length > 0 ? coll.find({ uri: { $in: remote } }).toArray() : [],
  ]);
  const out = new Map<string, AccountDoc>();
  for (const a of ours) for (const uri of usernames.get(a.usernameLower) ?? []) out.set(uri, a);
  for (const a of theirs) out.set(a.uri, a);
  return out;
}

export interface Parsed {
  mentionHrefs: string[];
  tagNames: string[];
}

/** The mentions and hashtags of an object, as `mentionsAndTags` reads them. */
export function parseTags(object: JsonObject): Parsed {
  const mentionHrefs: string[] = [];
  const tagNames: string[] = [];
  const seen = new Set<string>();
  for (const item of asArray(object.tag).slice(0, 100)) {
    const t = obj(item);
    if (!t) continue;
    if (t.type === 'Mention') {
      const href = idOf(t.href);
      if (href) mentionHrefs.push(href);
    } else if (t.type === 'Hashtag' && typeof t.name === 'string') {
      const name = t.name.replace(/^#/, '').slice(0, 256);
      const normalized = normalizeTagName(name);
      if (!normalized || seen.has(normalized) || tagNames.length >= 50) continue;
      seen.add(normalized);
      tagNames.push(name);
    }
  }
  return { mentionHrefs, tagNames };
}

export async function tagsByName(core: Core, names: string[]): Promise<Map<string, TagDoc>> {
  const wanted = new Map<string, string>();
  for (const n of names) if (!wanted.has(normalizeTagName(n))) wanted.set(normalizeTagName(n), n);
  const out = new Map<string, TagDoc>();
  if (wanted.size === 0) return out;
  const found = await collection(core.db, tagsCollection)
    .find({ nameNormalized: { $in: [...wanted.keys()] } })
    .toArray();
  for (const t of found) out.set(t.nameNormalized, t);
  await Promise.all(
    [...wanted]
      .filter(([normalized]) => !out.has(normalized))
      .map(async ([normalized, name]) => out.set(normalized, await findOrCreateTag(core, name))),
  );
  return out;
}

export type Audience = { mentions: StatusMention[]; tags: StatusTag[] };

/** An object's mentions (known accounts, each once) and hashtags, from the batch's lookups. */
export function audienceOf(parsed: Parsed, mentioned: Map<string, AccountDoc>, tagDocs: Map<string, TagDoc>): Audience {
  const mentions: StatusMention[] = [];
  for (const href of parsed.mentionHrefs) {
    const account = mentioned.get(href);
    if (!account || mentions.some((m) => m.accountId === account._id)) continue;
    mentions.push({
      accountId: account._id,
      username: account.username,
      acct: account.domain ? `${account.username}@${account.domain}` : account.username,
      url: account.url,
    });
  }
  const tags = parsed.tagNames.map((name) => ({ id: tagDocs.get(normalizeTagName(name))!._id, name }));
  return { mentions, tags };
}

/** `mentionsAndTags` for many objects: one lookup of all mentioned accounts and one of all tags. */
export async function audiencesOf(core: Core, objects: JsonObject[]): Promise<Audience[]> {
  const parsed = objects.map(parseTags);
  const [mentioned, tagDocs] = await Promise.all([
    accountsByUri(
      core,
      parsed.flatMap((p) => p.mentionHrefs),
    ),
    tagsByName(
      core,
      parsed.flatMap((p) => p.tagNames),
    ),
  ]);
  return parsed.map((p) => audienceOf(p, mentioned, tagDocs));
}
