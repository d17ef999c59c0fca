// The ActivityPub surface (federation reference §12): WebFinger and host-meta (wellKnown.ts),
// actor documents and collections, statuses at their ids with content negotiation (ActivityPub
// JSON for `Accept: application/activity+json`, `application/ld+json` or `application/json`; a
// redirect to the profile or status page for browsers), the instance actor, and the personal and
// shared inboxes. Bodies of inbox POSTs are read raw (the signature covers their exact bytes),
// at most 1 MiB. With AUTHORIZED_FETCH every GET except the instance actor must be signed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import type { Core } from '../../core/context.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { domainPolicy } from '../../core/moderation/domainBlocks.ts';
import { verifyRequest } from '../../core/activitypub/httpSignatures.ts';
import { findAccountByUri, keyResolver } from '../../core/activitypub/actors.ts';
import { INBOX_MAX_BYTES, receiveInboxRequest } from '../../core/activitypub/inbox.ts';
import { instanceActorKeys } from '../../core/activitypub/keys.ts';
import { renderInstanceActor } from '../../core/activitypub/render/actor.ts';
import { renderOrderedCollection } from '../../core/activitypub/render/collections.ts';
import { instanceActorUri } from '../../core/activitypub/uris.ts';
import {
  actorDocument,
  countCollectionDocument,
  type RepliesQuery,
  repliesDocument,
  servedAccount,
  statusDocument,
} from '../../core/activitypub/documents.ts';
import {
  featuredDocument,
  featuredTagsDocument,
  followsDocument,
  outboxDocument,
  type OutboxQuery,
} from '../../core/activitypub/accountCollections.ts';
import { ApiError } from '../errors.ts';
import { registerWellKnown } from './wellKnown.ts';
import { quoteAuthorizationDocument } from '../../core/quotes/federation.ts';
import {
  collectionItemDocument,
  featureAuthorizationDocument,
  featuredCollectionDocument,
  featuredCollectionsDocument,
} from '../../core/featuredCollections/documents.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Raw body of an inbox POST (signatures cover these exact bytes). */
    activityBody?: Buffer;
  }
}

const AP_TYPE = 'application/activity+json; charset=utf-8';

/** Whether the client asked for ActivityPub JSON rather than a page. */
export function wantsActivityJson(accept: string | undefined): boolean {
  if (!accept) return false;
  return /application\/(activity\+json|ld\+json|json)/i.test(accept);
}

function sendActivityJson(reply: FastifyReply, doc: unknown, signed: boolean): FastifyReply {
  return reply
    .header('vary', 'Accept, Accept-Encoding, Origin, Signature')
    .header('cache-control', signed ? 'max-age=0, private' : 'max-age=180, public')
    .type(AP_TYPE)
    .send(JSON.stringify(doc));
}

/**
 * The signed requester of a GET: null when unsigned (refused with 401 under AUTHORIZED_FETCH) or
 * when the signature does not verify (then 401 too: the sender meant to sign).
 */
async function requesterOf(core: Core, request: FastifyRequest): Promise<AccountDoc | null> {
  if (!request.headers.signature) {
    if (core.config.federation.authorizedFetch) throw new ApiError(401, 'Request not signed');
    return null;
  }
  const verified = await verifyRequest(
    { method: request.method, url: request.url, headers: request.headers },
    keyResolver(core),
  );
  if (!verified.ok) throw new ApiError(401, verified.error);
  const account = await findAccountByUri(core, verified.owner);
  if (!account) throw new ApiError(401, 'Unknown signer');
  if (account.domain !== null && (await domainPolicy(core, account.domain)).rejected)
    throw new ApiError(403, 'Your domain is not allowed to federate with this server');
  return account;
}

const idParam = (value: string): bigint => {
  if (!/^\d{1,19}$/.test(value)) throw new ApiError(404, 'Record not found');
  return BigInt(value);
};

function registerDocuments(app: FastifyInstance, core: Core): void {
  type UserParams = { Params: { username: string } };
  type StatusParams = { Params: { username: string; id: string } };

  app.get<UserParams>('/users/:username', async (request, reply) => {
    if (!wantsActivityJson(request.headers.accept)) {
      await servedAccount(core, request.params.username);
      return reply.header('vary', 'Accept, Origin').redirect(`/@${request.params.username}`, 301);
    }
    const requester = await requesterOf(core, request);
    const doc = await actorDocument(core, request.params.username);
    return sendActivityJson(reply.header('access-control-allow-origin', '*'), doc, requester !== null);
  });

  // Browsers get the profile page (services/web/public, a route constraint on the Accept header).
  app.get<UserParams>('/@:username', async (request, reply) => {
    const account = await servedAccount(core, request.params.username);
    const requester = await requesterOf(core, request);
    return sendActivityJson(reply, await actorDocument(core, account.username), requester !== null);
  });

  const statusRoute = (asActivity: boolean) => async (request: FastifyRequest<StatusParams>, reply: FastifyReply) => {
    const id = idParam(request.params.id);
    if (!wantsActivityJson(request.headers.accept) && !asActivity)
      return reply.header('vary', 'Accept, Origin').redirect(`/@${request.params.username}/${id}`, 301);
    const requester = await requesterOf(core, request);
    const doc = await statusDocument(core, request.params.username, id, requester, asActivity);
    return sendActivityJson(reply, doc, requester !== null);
  };
  app.get<StatusParams>('/users/:username/statuses/:id', statusRoute(false));
  app.get<StatusParams>('/users/:username/statuses/:id/activity', statusRoute(true));

  // Browsers get the status page (services/web/public, a route constraint on the Accept header).
  app.get<StatusParams>('/@:username/:id', async (request, reply) => statusRoute(false)(request, reply));

  app.get<StatusParams & { Querystring: RepliesQuery }>(
    '/users/:username/statuses/:id/replies',
    async (request, reply) => {
      const requester = await requesterOf(core, request);
      const doc = await repliesDocument(
        core,
        request.params.username,
        idParam(request.params.id),
        requester,
        stringParams(request.query, ['page', 'only_other_accounts', 'min_id']),
      );
      return sendActivityJson(reply, doc, requester !== null);
    },
  );
  // Collections (Mastodon 4.6, FEP-7aa9), at Mastodon's id-based paths.
  type ApUserParams = { Params: { account_id: string } };
  type ApItemParams = { Params: { account_id: string; id: string } };
  app.get<ApUserParams>('/ap/users/:account_id/featured_collections', async (request, reply) => {
    const requester = await requesterOf(core, request);
    const doc = await featuredCollectionsDocument(core, idParam(request.params.account_id));
    return sendActivityJson(reply, doc, requester !== null);
  });
  for (const [path, read] of [
    ['/ap/users/:account_id/collections/:id', featuredCollectionDocument],
    ['/ap/users/:account_id/collection_items/:id', collectionItemDocument],
    ['/ap/users/:account_id/feature_authorizations/:id', featureAuthorizationDocument],
  ] as const) {
    app.get<ApItemParams>(path, async (request, reply) => {
      const requester = await requesterOf(core, request);
      const doc = await read(core, idParam(request.params.account_id), idParam(request.params.id));
      return sendActivityJson(reply, doc, requester !== null);
    });
  }
  // FEP-044f: the stamp a local author gave a quote of their status.
  app.get<StatusParams>('/users/:username/quote_authorizations/:id', async (request, reply) => {
    const requester = await requesterOf(core, request);
    const doc = await quoteAuthorizationDocument(core, request.params.username, idParam(request.params.id));
    return sendActivityJson(reply, doc, requester !== null);
  });
  for (const [path, which] of [
    ['/users/:username/statuses/:id/likes', 'likes'],
    ['/users/:username/statuses/:id/shares', 'shares'],
  ] as const) {
    app.get<StatusParams>(path, async (request, reply) => {
      const requester = await requesterOf(core, request);
      const doc = await countCollectionDocument(
        core,
        request.params.username,
        idParam(request.params.id),
        which,
        requester,
      );
      return sendActivityJson(reply, doc, requester !== null);
    });
  }

  app.get<UserParams & { Querystring: OutboxQuery }>('/users/:username/outbox', async (request, reply) => {
    const requester = await requesterOf(core, request);
    const query: OutboxQuery = stringParams(request.query, ['page', 'max_id', 'min_id']);
    const doc = await outboxDocument(core, request.params.username, query, requester);
    return sendActivityJson(reply, doc, requester !== null);
  });

  for (const [path, which] of [
    ['/users/:username/followers', 'followers'],
    ['/users/:username/following', 'following'],
  ] as const) {
    app.get<UserParams>(path, async (request, reply) => {
      const requester = await requesterOf(core, request);
      const raw = (request.query as Record<string, unknown>).page;
      const doc = await followsDocument(
        core,
        request.params.username,
        which,
        typeof raw === 'string' ? raw : undefined,
      );
      return sendActivityJson(reply, doc, requester !== null);
    });
  }

  app.get<UserParams>('/users/:username/collections/featured', async (request, reply) => {
    const requester = await requesterOf(core, request);
    const doc = await featuredDocument(core, request.params.username, requester);
    return sendActivityJson(reply, doc, requester !== null);
  });

  app.get<UserParams>('/users/:username/collections/tags', async (request, reply) => {
    const requester = await requesterOf(core, request);
    const doc = await featuredTagsDocument(core, request.params.username);
    return sendActivityJson(reply, doc, requester !== null);
  });

  // The instance actor is always public: it breaks the "sign to fetch my key" loop.
  app.get('/actor', async (_request, reply) => {
    const keys = await instanceActorKeys(core);
    return sendActivityJson(reply, renderInstanceActor(core.config, keys.publicKeyPem), false);
  });
  app.get('/actor/outbox', async (_request, reply) =>
    sendActivityJson(reply, renderOrderedCollection(`${instanceActorUri(core.config)}/outbox`, 0, null), false),
  );
}

function registerInboxes(app: FastifyInstance, core: Core): void {
  // Raw bytes of any content type: Mastodon does not check it, and the Digest covers the bytes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: INBOX_MAX_BYTES }, (request, body, done) => {
    request.activityBody = body as Buffer;
    done(null, {});
  });

  const receive = async (request: FastifyRequest, reply: FastifyReply, inbox: AccountDoc | null) => {
    const outcome = await receiveInboxRequest(
      core,
      {
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: request.activityBody ?? Buffer.alloc(0),
      },
      inbox,
    );
    if (outcome.status === 202) return reply.code(202).send();
    return reply.code(outcome.status).send({ error: outcome.error });
  };

  app.post<{ Params: { username: string } }>('/users/:username/inbox', async (request, reply) => {
    const account = await servedAccount(core, request.params.username);
    return receive(request, reply, account);
  });
  app.post('/inbox', async (request, reply) => receive(request, reply, null));
  app.post('/actor/inbox', async (request, reply) => receive(request, reply, null));
}

const activityPubArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  registerWellKnown(app, core);
  registerDocuments(app, core);
  await app.register(async (inboxes) => registerInboxes(inboxes, core));
};

export default activityPubArea;

/** The named query parameters that arrived as single strings (repeated or bracketed ones are ignored). */
function stringParams<K extends string>(query: unknown, keys: readonly K[]): Partial<Record<K, string>> {
  const q = (query ?? {}) as Record<string, unknown>;
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) if (typeof q[k] === 'string') out[k] = q[k];
  return out;
}
