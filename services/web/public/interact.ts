// "Reply, boost, favourite or follow from your server": the visitor names their account or
// server and is sent to its authorize_interaction page (Mastodon's remote-interaction dialog).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { normalizeDomain } from '../../core/moderation/domainBlocks.ts';
import { actorCollections } from '../../core/activitypub/uris.ts';
import { instanceV2 } from '../../core/instance/publicDocuments.ts';
import { page } from '../view.ts';
import { publicAccount } from './reads.ts';
import type { PublicKit, StatusParams } from './pageKit.ts';

type UserParams = { Params: { username: string }; Querystring: Record<string, string | undefined> };

export function interactPages(app: FastifyInstance, kit: PublicKit): void {
  const { core, t, notFoundPage, localStatus } = kit;

  type InteractQuery = { type?: string; acct?: string };
  const INTERACTION_TITLES: Record<string, string> = {
    reply: 'public.interact.title_reply',
    reblog: 'public.interact.title_reblog',
    favourite: 'public.interact.title_favourite',
    follow: 'public.interact.title_follow',
  };
  const INTERACTIONS = Object.keys(INTERACTION_TITLES);

  async function interact(
    reply: FastifyReply,
    q: InteractQuery,
    target: { uri: string; back: string; action: string },
  ): Promise<FastifyReply> {
    const type = INTERACTIONS.includes(q.type ?? '') ? (q.type as string) : 'reply';
    const acct = (q.acct ?? '').trim();
    let error: string | null = null;
    if (acct) {
      const domain = normalizeDomain(acct.replace(/^@/, '').split('@').pop() ?? '');
      if (domain && domain.includes('.')) {
        // The visitor's server shows the post or account and lets them act on it (Mastodon's
        // authorize_interaction, the OStatus subscribe template of its WebFinger answer).
        return reply.redirect(`https://${domain}/authorize_interaction?uri=${encodeURIComponent(target.uri)}`, 303);
      }
      error = t('public.interact.invalid');
    }
    const info = await instanceV2(core);
    return page(reply, {
      status: error ? 422 : 200,
      template: 'public/interact',
      title: INTERACTION_TITLES[type],
      instance: info.title,
      data: { type, error, acct, back: target.back, action: target.action, brandHref: '/' },
    });
  }

  app.get<StatusParams & { Querystring: InteractQuery }>('/@:username/:id/interact', async (request, reply) => {
    const found = await localStatus(request);
    if (found === 'gone') return notFoundPage(reply, 410);
    if (!found) return notFoundPage(reply);
    return interact(reply, request.query, {
      uri: found.raw.uri,
      back: `/@${found.owner.username}/${found.raw.id}`,
      action: `/@${found.owner.username}/${found.raw.id}/interact`,
    });
  });
  app.get<UserParams & { Querystring: InteractQuery }>('/@:username/interact', async (request, reply) => {
    const owner = await publicAccount(core, request.params.username);
    if (!owner || owner.domain !== null) return notFoundPage(reply);
    if (owner.suspendedAt) return notFoundPage(reply, 410);
    return interact(
      reply,
      { ...request.query, type: 'follow' },
      {
        uri: actorCollections(core.config, owner.username).uri,
        back: `/@${owner.username}`,
        action: `/@${owner.username}/interact`,
      },
    );
  });
}
