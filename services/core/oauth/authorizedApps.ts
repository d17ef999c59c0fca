// The apps holding live tokens of a user (/oauth/authorized_applications): what each may do, when
// it was authorized and last used; revoking one revokes all its tokens of the user (open streaming
// sockets of those tokens close at the streaming server's next revocation check).
import type { Core } from '../context.ts';
import type { Id } from '../ids.ts';
import { collection } from '../db/mongo.ts';
import { accessTokens, apps, type AppDoc } from '../model/oauth.ts';
import { revokeUserTokens } from './tokens.ts';

export interface AuthorizedApp {
  app: AppDoc;
  scopes: string[];
  authorizedAt: Date;
  lastUsedAt: Date | null;
}

// A person holds tokens of a few dozen apps at most; the cap bounds a pathological account.
const MAX_TOKENS = 5000;

export async function listAuthorizedApps(core: Core, userId: Id): Promise<AuthorizedApp[]> {
  const tokens = await collection(core.db, accessTokens)
    .find(
      { userId, revokedAt: null },
      { projection: { appId: 1, scopes: 1, createdAt: 1, lastUsedAt: 1 }, limit: MAX_TOKENS },
    )
    .toArray();
  const byApp = new Map<Id, { scopes: Set<string>; authorizedAt: Date; lastUsedAt: Date | null }>();
  for (const t of tokens) {
    const entry = byApp.get(t.appId) ?? { scopes: new Set<string>(), authorizedAt: t.createdAt, lastUsedAt: null };
    for (const s of t.scopes) entry.scopes.add(s);
    if (t.createdAt < entry.authorizedAt) entry.authorizedAt = t.createdAt;
    if (t.lastUsedAt && (!entry.lastUsedAt || t.lastUsedAt > entry.lastUsedAt)) entry.lastUsedAt = t.lastUsedAt;
    byApp.set(t.appId, entry);
  }
  if (byApp.size === 0) return [];
  const docs = await collection(core.db, apps)
    .find({ _id: { $in: [...byApp.keys()] } })
    .toArray();
  return docs
    .map((app) => {
      const e = byApp.get(app._id)!;
      return { app, scopes: [...e.scopes], authorizedAt: e.authorizedAt, lastUsedAt: e.lastUsedAt };
    })
    .sort((a, b) => b.authorizedAt.getTime() - a.authorizedAt.getTime());
}

/** Revokes every token the user gave an app; false when the app holds none. */
export async function revokeAuthorizedApp(core: Core, userId: Id, appId: Id): Promise<boolean> {
  const live = await collection(core.db, accessTokens).findOne(
    { userId, appId, revokedAt: null },
    { projection: { _id: 1 } },
  );
  if (!live) return false;
  await revokeUserTokens(core, userId, appId);
  return true;
}
