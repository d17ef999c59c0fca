// Discovery (federation reference §1.1, §1.3): WebFinger for our accounts and the instance actor,
// host-meta in XML and JSON. Handles use LOCAL_DOMAIN; ids and links live on WEB_DOMAIN (baseUrl),
// and both domains are accepted in queries. CORS is open (app.ts) for /.well-known/.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Core } from '../../core/context.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { findLocalAccountByUsername } from '../../core/accounts/create.ts';
import { storageFor } from '../../core/media/storage.ts';
import { escapeHtml } from '../../core/text/formatStatus.ts';
import {
  actorCollections,
  instanceActorUri,
  INSTANCE_ACTOR_USERNAME,
  localBase,
  parseLocalUri,
} from '../../core/activitypub/uris.ts';

type Target = { kind: 'account'; account: AccountDoc } | { kind: 'instance' } | { kind: 'none' };

function domains(core: Core): Set<string> {
  return new Set([core.config.localDomain.toLowerCase(), core.config.webDomain.toLowerCase()]);
}

async function account(core: Core, username: string): Promise<Target> {
  const found = await findLocalAccountByUsername(core, username);
  return found && !found.pendingUser ? { kind: 'account', account: found } : { kind: 'none' };
}

/** What a `resource` names; 'bad' when it is neither a URL nor holds an `@`. */
async function resolveResource(core: Core, resource: string): Promise<Target | 'bad'> {
  const ours = domains(core);
  if (/^https?:\/\//i.test(resource)) {
    if (resource.replace(/\/$/, '') === localBase(core.config)) return { kind: 'instance' };
    const parsed = parseLocalUri(core.config, resource);
    if (parsed?.kind === 'instanceActor') return { kind: 'instance' };
    if (parsed?.kind === 'actor' || parsed?.kind === 'profile') return account(core, parsed.username);
    return { kind: 'none' };
  }
  const bare = resource.replace(/^acct:/i, '');
  if (ours.has(bare.toLowerCase())) return { kind: 'instance' };
  const at = bare.lastIndexOf('@');
  if (at < 0) return 'bad';
  const username = bare.slice(0, at).replace(/^@/, '');
  const domain = bare.slice(at + 1).toLowerCase();
  if (!ours.has(domain) || username === '') return { kind: 'none' };
  if (username === INSTANCE_ACTOR_USERNAME || ours.has(username.toLowerCase())) return { kind: 'instance' };
  return account(core, username);
}

function jrd(reply: FastifyReply, body: unknown, cacheSeconds: number): FastifyReply {
  return reply
    .header('cache-control', `max-age=${cacheSeconds}, public`)
    .header('vary', 'Origin')
    .type('application/jrd+json; charset=utf-8')
    .send(JSON.stringify(body));
}

export function registerWellKnown(app: FastifyInstance, core: Core): void {
  app.get('/.well-known/webfinger', async (request, reply) => {
    const raw = (request.query as Record<string, unknown>).resource;
    const resource = typeof raw === 'string' ? raw.trim() : '';
    if (resource === '' || resource.length > 1000)
      return jrd(reply.code(400), { error: 'The resource parameter is required' }, 180);
    const target = await resolveResource(core, resource);
    if (target === 'bad') return jrd(reply.code(400), { error: 'Invalid resource' }, 180);
    if (target.kind === 'none') return jrd(reply.code(404), { error: 'Record not found' }, 180);
    const host = core.config.localDomain;
    if (target.kind === 'instance') {
      const id = instanceActorUri(core.config);
      return jrd(
        reply,
        {
          subject: `acct:${INSTANCE_ACTOR_USERNAME}@${host}`,
          aliases: [id],
          links: [
            {
              rel: 'http://webfinger.net/rel/profile-page',
              type: 'text/html',
              href: `${localBase(core.config)}/about/more?instance_actor=true`,
            },
            { rel: 'self', type: 'application/activity+json', href: id },
            {
              rel: 'http://ostatus.org/schema/1.0/subscribe',
              template: `${localBase(core.config)}/authorize_interaction?uri={uri}`,
            },
          ],
        },
        259_200,
      );
    }
    const a = target.account;
    const c = actorCollections(core.config, a.username);
    const links: Record<string, string>[] = [
      { rel: 'http://webfinger.net/rel/profile-page', type: 'text/html', href: c.url },
      { rel: 'self', type: 'application/activity+json', href: c.uri },
      {
        rel: 'http://ostatus.org/schema/1.0/subscribe',
        template: `${localBase(core.config)}/authorize_interaction?uri={uri}`,
      },
    ];
    if (a.avatar && !a.suspendedAt)
      links.push({
        rel: 'http://webfinger.net/rel/avatar',
        type: a.avatar.contentType,
        href: storageFor(core).url(a.avatar.path),
      });
    return jrd(reply, { subject: `acct:${a.username}@${host}`, aliases: [c.url, c.uri], links }, 259_200);
  });

  const template = () => `${localBase(core.config)}/.well-known/webfinger?resource={uri}`;
  const hostMetaJson = (reply: FastifyReply) =>
    reply
      .header('cache-control', 'max-age=259200, public')
      .type('application/json; charset=utf-8')
      .send(JSON.stringify({ links: [{ rel: 'lrdd', template: template() }] }));

  app.get('/.well-known/host-meta', async (request, reply) => {
    if (/application\/(jrd\+)?json/.test(request.headers.accept ?? '')) return hostMetaJson(reply);
    return reply
      .header('cache-control', 'max-age=259200, public')
      .type('application/xrd+xml; charset=utf-8')
      .send(
        '<?xml version="1.0" encoding="UTF-8"?>\n' +
          '<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">\n' +
          `  <Link rel="lrdd" template="${escapeHtml(template())}"/>\n` +
          '</XRD>\n',
      );
  });
  app.get('/.well-known/host-meta.json', async (_request, reply) => hostMetaJson(reply));
}
