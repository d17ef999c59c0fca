// Resolving what a user typed into search or lookup (Mastodon's ResolveAccountService and
// ResolveURLService): `user@domain` → WebFinger → actor; an http(s) URL → a known account or
// status by id or page URL, else fetched (an alias URL may name the canonical id, which must then
// confirm itself) and stored. For `/api/v2/search?resolve=true` and `/api/v1/accounts/lookup`.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { parseAcct } from '../accounts/queries.ts';
import { domainPolicy } from '../moderation/domainBlocks.ts';
import { fetchDocument, isFetchProblem } from './fetchDocument.ts';
import { findAccountByUri, isActorDocument, resolveActor, upsertRemoteActor, STALE_AFTER_MS } from './actors.ts';
import { webfinger, WebfingerError } from './webfinger.ts';
import { createRemoteStatus, findStatusByUri, isStatusObject } from './ingress/statuses.ts';
import { hostOf, isLocalUri, parseLocalUri } from './uris.ts';
import { idOf } from './json.ts';

export interface Resolved {
  account: AccountDoc | null;
  status: StatusDoc | null;
}

const NOTHING: Resolved = { account: null, status: null };

/** A remote account by `user@domain`: known and fresh, else WebFinger then the actor. */
export async function resolveAccountByAcct(core: Core, acct: string): Promise<AccountDoc | null> {
  const parsed = parseAcct(core, acct);
  if (!parsed) return null;
  const known = await collection(core.db, accounts).findOne({
    usernameLower: parsed.username.toLowerCase(),
    domain: parsed.domain,
  });
  if (parsed.domain === null || !/^[a-z0-9.-]{1,253}(:\d{1,5})?$/i.test(parsed.domain)) return known;
  const fresh = known?.lastWebfingeredAt && Date.now() - known.lastWebfingeredAt.getTime() < STALE_AFTER_MS;
  if (known && fresh) return known;
  if ((await domainPolicy(core, parsed.domain)).rejected) return known;
  try {
    const wf = await webfinger(core, `${parsed.username}@${parsed.domain}`);
    const doc = await fetchDocument(core, wf.actor);
    if (!isActorDocument(doc) || hostOf(String(doc.id)) === null) return known;
    const account = await upsertRemoteActor(core, doc, wf.domain);
    await collection(core.db, accounts).updateOne({ _id: account._id }, { $set: { lastWebfingeredAt: new Date() } });
    return account;
  } catch (err) {
    if (err instanceof WebfingerError || isFetchProblem(err) || (err as Error).name === 'ActorError') {
      core.logger.debug({ err, acct }, 'account resolution failed');
      return known;
    }
    throw err;
  }
}

/** A URL or handle to an account or status, fetching and storing remote ones. */
export async function resolveRemote(core: Core, query: string): Promise<Resolved> {
  const q = query.trim();
  if (/^https?:\/\//i.test(q)) return resolveUrl(core, q);
  if (/^@?[^@\s]+@[^@\s]+$/.test(q)) return { account: await resolveAccountByAcct(core, q), status: null };
  return NOTHING;
}

async function resolveUrl(core: Core, url: string): Promise<Resolved> {
  if (isLocalUri(core.config, url)) {
    const local = parseLocalUri(core.config, url);
    if (!local) return NOTHING;
    if (local.kind === 'actor' || local.kind === 'profile')
      return { account: await findAccountByUri(core, url), status: null };
    if (local.kind === 'status' || local.kind === 'statusPage')
      return { account: null, status: await findStatusByUri(core, url) };
    return NOTHING;
  }
  const byUri = await collection(core.db, accounts).findOne({ $or: [{ uri: url }, { url }] });
  if (byUri) return { account: byUri, status: null };
  const status =
    (await collection(core.db, statuses).findOne({ uri: url, deletedAt: null })) ??
    (await collection(core.db, statuses).findOne({ url, deletedAt: null }));
  if (status) return { account: null, status };
  const host = hostOf(url);
  if (!host || (await domainPolicy(core, host)).rejected) return NOTHING;
  try {
    const doc = await fetchDocument(core, url, { idUnknown: true });
    const id = typeof doc.id === 'string' ? doc.id : null;
    if (!id) return NOTHING;
    if (isActorDocument(doc)) return { account: await resolveActor(core, id), status: null };
    if (isStatusObject(doc)) {
      const known = await findStatusByUri(core, id);
      if (known) return { account: null, status: known };
      const authorUri = idOf(doc.attributedTo);
      if (!authorUri || hostOf(authorUri) !== hostOf(id)) return NOTHING;
      const author = await resolveActor(core, authorUri);
      if (!author || author.domain === null) return NOTHING;
      return { account: null, status: await createRemoteStatus(core, author, doc, { requested: true }) };
    }
  } catch (err) {
    if (!isFetchProblem(err)) throw err;
    core.logger.debug({ err, url }, 'URL resolution failed');
  }
  return NOTHING;
}
