// An independent ActivityPub server for federation tests, built on @fedify/fedify (its own JSON-LD
// processing, WebFinger, and HTTP signatures: RFC 9421 first, draft-cavage after a 401). Run as a
// child process (`node test/federation/fedifyPeer/server.ts`; it binds port 0 and prints the port), because Fedify is ESM-only
// at heart. Besides ActivityPub it answers a few control requests under /_test/ so a test can make
// it look us up and send activities, and read what reached its inbox. Its people (carol, and those a
// test adds with /_test/person) accept every Follow, as an unlocked account on a real server does.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFederation, generateCryptoKeyPair, MemoryKvStore } from '@fedify/fedify';
import {
  Accept,
  Collection,
  CollectionPage,
  Create,
  Delete,
  Endpoints,
  Follow,
  InteractionPolicy,
  InteractionRule,
  Mention,
  Move,
  Note,
  Person,
  PUBLIC_COLLECTION,
  QuoteAuthorization,
  QuoteRequest,
  Reject,
  Undo,
} from '@fedify/vocab';

// Bound first (port 0: the kernel's choice), served once everything below is set up: the origin
// names the port.
const server = http.createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;
const url = `http://localhost:${port}`;
const federation = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true, origin: url });
const keys = await generateCryptoKeyPair('RSASSA-PKCS1-v1_5');
const received: Array<{
  type: string;
  id: string | null;
  actor: string | null;
  object: string | null;
  instrument?: string | null;
  result?: string | null;
  target?: string | null;
}> = [];
// Notes and quote stamps this peer publishes (FEP-044f), served by their ids.
const notes = new Map<string, Note>();
const stamps = new Map<string, QuoteAuthorization>();

/** The people of this peer: display name, former accounts (alsoKnownAs) and where one moved. */
const people = new Map<string, { name: string; aliases: URL[]; movedTo: URL | null }>([
  ['carol', { name: 'Carol on Fedify', aliases: [], movedTo: null }],
]);

federation
  .setActorDispatcher('/users/{identifier}', async (ctx, identifier) => {
    const person = people.get(identifier);
    if (!person) return null;
    const [pair] = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      name: person.name,
      summary: '<p>An independent peer</p>',
      inbox: ctx.getInboxUri(identifier),
      endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      url: new URL(`/@${identifier}`, url),
      publicKey: pair.cryptographicKey,
      assertionMethods: [pair.multikey],
      aliases: person.aliases,
      successor: person.movedTo,
    });
  })
  .setKeyPairsDispatcher(async () => [keys])
  .mapHandle(async (_ctx, username) => (people.has(username) ? username : null));

federation.setObjectDispatcher(Note, '/notes/{id}', (_ctx, values) => notes.get(`${url}/notes/${values.id}`) ?? null);
federation.setObjectDispatcher(
  QuoteAuthorization,
  '/stamps/{id}',
  (_ctx, values) => stamps.get(`${url}/stamps/${values.id}`) ?? null,
);

type Recordable = {
  constructor: { name: string };
  id: URL | null;
  actorId: URL | null;
  objectId: URL | null;
  instrumentId: URL | null;
  resultId: URL | null;
  targetId?: URL | null;
};
const record = async (_ctx: unknown, activity: Recordable) => {
  received.push({
    type: activity.constructor.name,
    id: activity.id?.href ?? null,
    actor: activity.actorId?.href ?? null,
    object: activity.objectId?.href ?? null,
    instrument: activity.instrumentId?.href ?? null,
    result: activity.resultId?.href ?? null,
    target: activity.targetId?.href ?? null,
  });
};
federation
  .setInboxListeners('/users/{identifier}/inbox', '/inbox')
  .on(Accept, record)
  .on(Reject, record)
  .on(Delete, record)
  .on(QuoteRequest, record)
  .on(Follow, async (ctx, follow) => {
    await record(ctx, follow);
    // One of ours is followed: accept at once (an unlocked account).
    const followed = follow.objectId ? ctx.parseUri(follow.objectId) : null;
    const follower = await follow.getActor();
    if (followed?.type !== 'actor' || !people.has(followed.identifier) || !follower || !follow.id) return;
    await ctx.sendActivity(
      { identifier: followed.identifier },
      follower,
      new Accept({ id: new URL(`${follow.id.href}#accept`), actor: follow.objectId, object: follow }),
    );
  })
  .on(Create, record)
  .on(Move, record)
  .on(Undo, record);

async function control(path: string, input: Record<string, string>): Promise<unknown> {
  const ctx = federation.createContext(new URL(url), undefined);
  const me = ctx.getActorUri('carol');
  if (path === '/_test/received') return received;
  if (path === '/_test/replies') {
    // Walks a Note's `replies` as a backfilling server does (GoToSocial wants CollectionPage-like
    // pages): the collection, its first page, then `next` pages, with Fedify's own vocabulary.
    const note = await ctx.lookupObject(input.note);
    if (!(note instanceof Note)) return { note: false };
    const replies = await note.getReplies();
    const pages: Array<{ id: string | null; page: boolean; partOf: string | null; items: string[] }> = [];
    let page = replies instanceof Collection ? await replies.getFirst() : null;
    for (let i = 0; page && i < 10; i++) {
      const items: string[] = [];
      for await (const item of page.getItems()) if (item instanceof Note && item.id) items.push(item.id.href);
      pages.push({
        id: page.id?.href ?? null,
        page: page instanceof CollectionPage,
        partOf: page instanceof CollectionPage ? (page.partOfId?.href ?? null) : null,
        items,
      });
      page = page instanceof CollectionPage ? await page.getNext() : null;
    }
    return { note: true, collection: replies instanceof Collection ? (replies.id?.href ?? null) : null, pages };
  }
  if (path === '/_test/lookup') {
    // Fedify asks https:// for acct: resources; an http:// actor URL as the resource stays on http.
    const wf = await ctx.lookupWebFinger(input.resource);
    const self = wf?.links?.find((l) => l.rel === 'self' && l.type === 'application/activity+json')?.href ?? null;
    const actor = self ? await ctx.lookupObject(self) : null;
    if (!(actor instanceof Person)) return { self, person: false };
    const key = await actor.getPublicKey();
    return {
      subject: wf?.subject ?? null,
      self,
      person: true,
      preferredUsername: actor.preferredUsername?.toString() ?? null,
      inbox: actor.inboxId?.href ?? null,
      sharedInbox: actor.endpoints?.sharedInbox?.href ?? null,
      keyId: key?.id?.href ?? null,
      keyOwner: key?.ownerId?.href ?? null,
    };
  }
  if (path === '/_test/read') {
    // How Fedify's vocabulary reads one of our documents: a Note's quote, its stamp and its
    // quote policy, or a QuoteAuthorization stamp.
    const object = await ctx.lookupObject(input.uri);
    if (object instanceof QuoteAuthorization)
      return {
        type: 'QuoteAuthorization',
        attributedTo: object.attributionId?.href ?? null,
        interactingObject: object.interactingObjectId?.href ?? null,
        interactionTarget: object.interactionTargetId?.href ?? null,
      };
    if (object instanceof Note) {
      const canQuote = object.interactionPolicy?.canQuote ?? null;
      return {
        type: 'Note',
        quote: object.quoteId?.href ?? null,
        quoteAuthorization: object.quoteAuthorizationId?.href ?? null,
        canQuoteAutomatic: canQuote?.automaticApprovals.map((u) => u.href) ?? null,
      };
    }
    return { type: object?.constructor.name ?? null };
  }
  if (path === '/_test/person') {
    // A person of this peer, or new former accounts (comma-separated actor URIs) of one.
    people.set(input.name, {
      name: input.display ?? input.name,
      aliases: (input.aliases ?? '')
        .split(',')
        .filter(Boolean)
        .map((a) => new URL(a)),
      movedTo: null,
    });
    return { uri: ctx.getActorUri(input.name).href };
  }
  if (path === '/_test/move') {
    // `from` moves to `to` (both people of this peer, `to` naming `from` as an alias): its actor
    // says movedTo, and the Move goes to the follower `target` (the shared inbox of its server).
    const from = people.get(input.from);
    if (!from) throw new Error(`no person ${input.from}`);
    from.movedTo = new URL(input.to);
    const follower = await ctx.lookupObject(input.target);
    if (!(follower instanceof Person)) throw new Error(`not a Person: ${input.target}`);
    const actor = ctx.getActorUri(input.from);
    await ctx.sendActivity(
      { identifier: input.from },
      follower,
      new Move({ id: new URL(`${actor.href}#moves/1`), actor, object: actor, target: from.movedTo }),
      { preferSharedInbox: true },
    );
    return { sent: true };
  }
  if (path === '/_test/forget') {
    // Carol stops serving a stamp without telling anyone (no Delete).
    return { forgotten: stamps.delete(input.stamp) };
  }
  if (path === '/_test/publish') {
    // A Note others may quote: automatically (public), after asking (manual), or only its author.
    const approval = input.quotePolicy ?? 'public';
    const rule =
      approval === 'public'
        ? new InteractionRule({ automaticApprovals: [PUBLIC_COLLECTION] })
        : approval === 'manual'
          ? new InteractionRule({ manualApprovals: [PUBLIC_COLLECTION] })
          : new InteractionRule({ automaticApprovals: [me] });
    notes.set(
      input.id,
      new Note({
        id: new URL(input.id),
        attribution: me,
        to: PUBLIC_COLLECTION,
        content: input.content,
        interactionPolicy: new InteractionPolicy({ canQuote: rule }),
      }),
    );
    return { published: true };
  }
  const target = await ctx.lookupObject(input.target);
  if (!(target instanceof Person)) throw new Error(`not a Person: ${input.target}`);
  if (path === '/_test/follow') {
    await ctx.sendActivity(
      { identifier: 'carol' },
      target,
      new Follow({ id: new URL(input.id), actor: me, object: target.id }),
    );
    return { sent: true };
  }
  if (path === '/_test/note') {
    const note = new Note({
      id: new URL(input.id),
      attribution: me,
      tos: [PUBLIC_COLLECTION, target.id!],
      content: input.content,
      tags: [new Mention({ href: target.id, name: input.mention })],
    });
    await ctx.sendActivity(
      { identifier: 'carol' },
      target,
      new Create({
        id: new URL(`${input.id}/activity`),
        actor: me,
        tos: [PUBLIC_COLLECTION, target.id!],
        object: note,
      }),
    );
    return { sent: true };
  }
  if (path === '/_test/quote') {
    // Carol quotes one of the target's posts: the Note carries `quote`, and a QuoteRequest with the
    // Note inlined as its instrument asks the quoted author (FEP-044f).
    const note = new Note({
      id: new URL(input.id),
      attribution: me,
      to: PUBLIC_COLLECTION,
      content: input.content,
      quote: new URL(input.quoted),
    });
    notes.set(input.id, note);
    await ctx.sendActivity(
      { identifier: 'carol' },
      target,
      new QuoteRequest({
        id: new URL(`${input.id}/quote_request`),
        actor: me,
        object: new URL(input.quoted),
        instrument: note,
      }),
    );
    return { sent: true };
  }
  if (path === '/_test/answer') {
    // Carol answers a QuoteRequest for her post: Accept with a stamp she serves, or Reject.
    const request = new QuoteRequest({
      id: new URL(input.request),
      actor: target.id,
      object: new URL(input.quoted),
      instrument: new URL(input.quoting),
    });
    if (input.decision === 'accept') {
      const stampId = new URL(input.stamp);
      stamps.set(
        stampId.href,
        new QuoteAuthorization({
          id: stampId,
          attribution: me,
          interactingObject: new URL(input.quoting),
          interactionTarget: new URL(input.quoted),
        }),
      );
      await ctx.sendActivity(
        { identifier: 'carol' },
        target,
        new Accept({ id: new URL(`${stampId.href}#accept`), actor: me, object: request, result: stampId }),
      );
    } else {
      await ctx.sendActivity(
        { identifier: 'carol' },
        target,
        new Reject({ id: new URL(`${input.request}#reject`), actor: me, object: request }),
      );
    }
    return { sent: true };
  }
  if (path === '/_test/revoke') {
    // Carol takes her approval back: the stamp is gone and its Delete says so.
    stamps.delete(input.stamp);
    await ctx.sendActivity(
      { identifier: 'carol' },
      target,
      new Delete({
        id: new URL(`${input.stamp}#delete`),
        actor: me,
        to: PUBLIC_COLLECTION,
        object: new URL(input.stamp),
      }),
    );
    return { sent: true };
  }
  throw new Error(`unknown control ${path}`);
}

server.on('request', (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0];
    if (path.startsWith('/_test/')) {
      const input = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      control(path, input)
        .then((out) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(out));
        })
        .catch((err: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: String(err instanceof Error ? err.stack : err) }));
        });
      return;
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
    federation
      .fetch(new Request(new URL(req.url ?? '/', url), { method: req.method, headers, body }), {
        contextData: undefined,
        onNotFound: () => new Response('not found', { status: 404 }),
      })
      .then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      })
      .catch((err: unknown) => {
        res.writeHead(500);
        res.end(String(err));
      });
  });
});
console.log(`fedify peer ready on port ${port}`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
