// Settings pages: the apps holding tokens of the user (/oauth/authorized_applications), with their
// permissions and last use, and revoking one (all its tokens; streaming sockets of those tokens
// close at the streaming server's next revocation check).
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { UserDoc } from '../../core/model/users.ts';
import { parseId } from '../../core/ids.ts';
import { listAuthorizedApps, revokeAuthorizedApp } from '../../core/oauth/authorizedApps.ts';
import { findAppById } from '../../core/oauth/apps.ts';
import { translator } from '../i18n.ts';
import { page } from '../view.ts';
import { requireSignedIn } from '../guard.ts';

const t = translator('en');

function date(d: Date): string {
  return d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

const settingsPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;

  async function appsPage(
    reply: FastifyReply,
    user: UserDoc,
    username: string,
    notice?: string,
  ): Promise<FastifyReply> {
    const apps = await listAuthorizedApps(core, user._id);
    return page(reply, {
      template: 'settings/authorized_apps',
      title: 'authorized_apps.title',
      instance,
      signedInAs: username,
      csrf: reply.generateCsrf(),
      data: {
        notice: notice ?? null,
        apps: apps.map((a) => ({
          id: String(a.app._id),
          name: a.app.name,
          website: a.app.website && /^https?:\/\//i.test(a.app.website) ? a.app.website : null,
          scopes: a.scopes.join(' '),
          authorizedAt: date(a.authorizedAt),
          lastUsedAt: a.lastUsedAt ? date(a.lastUsedAt) : null,
        })),
      },
    });
  }

  app.get('/oauth/authorized_applications', async (request, reply) => {
    const signedIn = await requireSignedIn(core, request, reply, '/oauth/authorized_applications');
    if (!signedIn) return reply;
    return appsPage(reply, signedIn.user, signedIn.account.username);
  });

  // DELETE in Mastodon; a form without JavaScript posts it with `_method=delete`, as Rails forms do.
  app.post<{ Params: { id: string } }>(
    '/oauth/authorized_applications/:id',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const signedIn = await requireSignedIn(core, request, reply, '/oauth/authorized_applications');
      if (!signedIn) return reply;
      const appId = parseId(request.params.id);
      const client = appId === null ? null : await findAppById(core, appId);
      const revoked = client ? await revokeAuthorizedApp(core, signedIn.user._id, client._id) : false;
      return appsPage(
        reply,
        signedIn.user,
        signedIn.account.username,
        revoked && client ? t('authorized_apps.revoked', { name: client.name }) : undefined,
      );
    },
  );
};

export default settingsPages;
