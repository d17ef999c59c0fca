// The thread around a status: ancestors (root first) and descendants (depth-first thread order),
// visibility-checked. Logged-out callers get Mastodon's stricter limits.
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import type { CachedAccount } from '../model/accounts.ts';
import { statuses, type StatusDoc } from '../model/statuses.ts';
import { filterVisible } from './visibility.ts';

export const CONTEXT_LIMITS = {
  anonymous: { ancestors: 40, descendants: 60, depth: 20 },
  authenticated: { ancestors: 4096, descendants: 4096, depth: Number.POSITIVE_INFINITY },
} as const;

export async function statusContext(
  core: Core,
  viewer: CachedAccount | null,
  status: StatusDoc,
): Promise<{ ancestors: StatusDoc[]; descendants: StatusDoc[] }> {
  const limits = viewer ? CONTEXT_LIMITS.authenticated : CONTEXT_LIMITS.anonymous;
  const coll = collection(core.db, statuses);

  const ancestors: StatusDoc[] = [];
  let parentId = status.inReplyToId;
  const seen = new Set<bigint>([status._id]);
  while (parentId !== null && ancestors.length < limits.ancestors && !seen.has(parentId)) {
    seen.add(parentId);
    const parent = await coll.findOne({ _id: parentId });
    // A deleted parent cuts the thread (Mastodon nullifies its replies' in_reply_to_id).
    if (!parent || parent.deletedAt) break;
    ancestors.unshift(parent);
    parentId = parent.inReplyToId;
  }

  // Level by level (one query per depth), then arranged depth-first.
  const children = new Map<bigint, StatusDoc[]>();
  let frontier: Id[] = [status._id];
  let depth = 0;
  let total = 0;
  while (frontier.length > 0 && depth < limits.depth && total < limits.descendants) {
    const level = await coll
      .find({ inReplyToId: { $in: frontier }, deletedAt: null })
      .sort({ _id: 1 })
      .limit(limits.descendants - total)
      .toArray();
    for (const s of level) {
      if (seen.has(s._id)) continue;
      seen.add(s._id);
      const list = children.get(s.inReplyToId as Id) ?? [];
      list.push(s);
      children.set(s.inReplyToId as Id, list);
    }
    total += level.length;
    frontier = level.map((s) => s._id);
    depth++;
  }
  const descendants: StatusDoc[] = [];
  const walk = (id: Id) => {
    for (const child of children.get(id) ?? []) {
      descendants.push(child);
      walk(child._id);
    }
  };
  walk(status._id);

  return {
    ancestors: await filterVisible(
      core,
      viewer,
      ancestors.filter((s) => !s.deletedAt),
    ),
    descendants: await filterVisible(core, viewer, descendants),
  };
}
