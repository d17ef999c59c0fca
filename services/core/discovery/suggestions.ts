// Follow suggestions (Mastodon's AccountSuggestions): accounts followed by the accounts one follows
// ("friends of friends"), then popular discoverable local accounts; never oneself, accounts already
// followed or requested, blocked or muted either way, or dismissed.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accounts, visibleAccountFilter, type AccountDoc, type CachedAccount } from '../model/accounts.ts';
import { follows } from '../model/follows.ts';
import { followRequests } from '../model/followRequests.ts';
import { suggestionDismissals } from '../model/featuredTags.ts';
import { hiddenFrom } from '../graph/collections.ts';

/** Mastodon 4.3's names: `featured` is for accounts staff picked, popular ones are `most_followed`. */
export type SuggestionSource = 'friends_of_friends' | 'most_followed';

export interface Suggestion {
  account: AccountDoc;
  sources: SuggestionSource[];
}

const FRIENDS_SAMPLE = 200;

export async function followSuggestions(core: Core, viewer: CachedAccount, limit: number): Promise<Suggestion[]> {
  const [followed, requested, dismissed] = await Promise.all([
    collection(core.db, follows)
      .find({ accountId: viewer._id }, { projection: { targetAccountId: 1 } })
      .toArray(),
    collection(core.db, followRequests)
      .find({ accountId: viewer._id }, { projection: { targetAccountId: 1 } })
      .toArray(),
    collection(core.db, suggestionDismissals).find({ accountId: viewer._id }).toArray(),
  ]);
  const followedIds = followed.map((f) => f.targetAccountId);
  const excluded = new Set<bigint>([
    viewer._id,
    ...followedIds,
    ...requested.map((r) => r.targetAccountId),
    ...dismissed.map((d) => d.targetAccountId),
  ]);

  const scores = new Map<bigint, number>();
  if (followedIds.length > 0) {
    const theirs = await collection(core.db, follows)
      .find({ accountId: { $in: followedIds.slice(0, FRIENDS_SAMPLE) } }, { projection: { targetAccountId: 1 } })
      .limit(5000)
      .toArray();
    for (const f of theirs)
      if (!excluded.has(f.targetAccountId)) scores.set(f.targetAccountId, (scores.get(f.targetAccountId) ?? 0) + 1);
  }
  const friends = [...scores.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
  const popular = (
    await collection(core.db, accounts)
      .find(
        { domain: null, discoverable: true, suspendedAt: null, ...visibleAccountFilter },
        { projection: { _id: 1 } },
      )
      .sort({ followersCount: -1 })
      .limit(limit + excluded.size + 20)
      .toArray()
  )
    .map((a) => a._id)
    .filter((id) => !excluded.has(id));

  const sources = new Map<bigint, SuggestionSource[]>();
  for (const id of friends) sources.set(id, ['friends_of_friends']);
  for (const id of popular) sources.set(id, [...(sources.get(id) ?? []), 'most_followed']);
  const candidates: Id[] = [...sources.keys()];
  const hidden = await hiddenFrom(core, viewer, candidates);
  const found = new Map(
    (
      await collection(core.db, accounts)
        .find({ _id: { $in: candidates.filter((id) => !hidden.has(id)) }, suspendedAt: null, ...visibleAccountFilter })
        .toArray()
    ).map((a) => [a._id, a]),
  );
  const out: Suggestion[] = [];
  for (const id of candidates) {
    const account = found.get(id);
    if (account && !account.movedToAccountId) out.push({ account, sources: sources.get(id) ?? [] });
    if (out.length >= limit) break;
  }
  return out;
}

export async function dismissSuggestion(core: Core, viewer: CachedAccount, targetId: Id): Promise<void> {
  await collection(core.db, suggestionDismissals).updateOne(
    { _id: `${viewer._id}:${targetId}` },
    { $setOnInsert: { accountId: viewer._id, targetAccountId: targetId, createdAt: new Date() } },
    { upsert: true },
  );
}
