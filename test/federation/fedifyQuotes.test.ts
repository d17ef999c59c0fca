// Quote posts (FEP-044f) with an independent implementation: the Fedify peer
// (fedifyPeer/server.ts, @fedify/vocab's QuoteRequest, QuoteAuthorization and InteractionPolicy)
// quotes our posts and is quoted by ours. Both directions: its QuoteRequest gets our Accept with a
// stamp that Fedify dereferences and reads, or our Reject for a post nobody may quote; our
// QuoteRequest for its post gets its Accept (stamp on its host) or Reject, and its Delete of the
// stamp revokes our quote. A revocation reaches every server that shows the quote (the reach of
// both posts), here the Fedify peer following the quoted author while the quoter is local.
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { follows } from '../../services/core/model/follows.ts';
import { statuses } from '../../services/core/model/statuses.ts';
import { refreshStaleQuotes } from '../../services/core/quotes/ingress.ts';
import { runTestDelivery, settles, startInstance, type Instance } from './support.ts';
import { startFedifyPeer, type FedifyPeer } from './fedifyPeer/control.ts';

jest.setTimeout(120_000);

describe('quote posts with a Fedify peer', () => {
  let ours: Instance;
  let peer: FedifyPeer;
  let peerUrl: string;
  let carolUri: string;
  let delivery: { stop(): Promise<void> };
  let alice: TestUser;
  let bob: TestUser;
  let aliceUri: string;

  const control = (path: string, body: Record<string, string> = {}) => peer.control(path, body);
  type Received = { type: string; id: string; object: string | null; result?: string | null; instrument?: string };
  const received = async (): Promise<Received[]> => (await control('received')) as Received[];

  /** A status by its URI, as our server knows it (resolved from the peer when needed). */
  async function resolve(uri: string): Promise<{ id: string; quote: { state: string } | null }> {
    const res = await ours.call(
      'GET',
      `/api/v2/search?resolve=true&type=statuses&q=${encodeURIComponent(uri)}`,
      bob.token,
    );
    expect(res.body.statuses).toHaveLength(1);
    return res.body.statuses[0];
  }

  beforeAll(async () => {
    ours = await startInstance();
    delivery = await runTestDelivery(ours.core);
    peer = await startFedifyPeer();
    peerUrl = peer.url;
    carolUri = `${peerUrl}/users/carol`;
    [alice, bob] = await Promise.all([
      createTestUser(ours.core, { username: 'alice' }),
      createTestUser(ours.core, { username: 'bob' }),
    ]);
    aliceUri = `${ours.url}/users/alice`;
    // Carol follows Alice, so Alice's posts reach the peer.
    await control('follow', { target: aliceUri, id: `${peerUrl}/follows/1` });
    await settles(
      async () => {
        const carol = await collection(ours.core.db, accounts).findOne({ uri: carolUri });
        expect(carol).not.toBeNull();
        expect(
          await collection(ours.core.db, follows).findOne({
            accountId: carol!._id,
            targetAccountId: alice.account._id,
          }),
        ).not.toBeNull();
      },
      30_000,
      'Fedify follows alice',
    );
  });

  afterAll(async () => {
    await peer?.stop();
    await delivery?.stop();
    await ours?.close();
  });

  it('Fedify quotes our post: QuoteRequest, our Accept with a stamp Fedify reads, the quote shown here', async () => {
    const quoted = await ours.call('POST', '/api/v1/statuses', alice.token, { status: 'quote me, Fedify' });
    expect(quoted.status).toBe(200);
    // Fedify reads our Note's quote policy.
    expect(await control('read', { uri: quoted.body.uri })).toMatchObject({
      type: 'Note',
      quote: null,
      canQuoteAutomatic: ['https://www.w3.org/ns/activitystreams#Public'],
    });

    const noteId = `${peerUrl}/notes/quote-1`;
    await control('quote', { target: aliceUri, quoted: quoted.body.uri, id: noteId, content: '<p>Fedify quotes</p>' });
    const accept = await settles(
      async () => {
        const a = (await received()).find((r) => r.type === 'Accept' && r.object === `${noteId}/quote_request`);
        expect(a).toBeDefined();
        return a!;
      },
      30_000,
      'our Accept of the QuoteRequest',
    );
    // The stamp is ours, on Alice's host, and Fedify reads it as a QuoteAuthorization naming both posts.
    expect(accept.result).toMatch(new RegExp(`^${aliceUri}/quote_authorizations/\\d+$`));
    expect(await control('read', { uri: accept.result! })).toEqual({
      type: 'QuoteAuthorization',
      attributedTo: aliceUri,
      interactingObject: noteId,
      interactionTarget: quoted.body.uri,
    });

    // Here: the quote is accepted, listed, counted and notified.
    const listed = await settles(
      async () => {
        const res = await ours.call('GET', `/api/v1/statuses/${quoted.body.id}/quotes`, alice.token);
        expect(res.body).toHaveLength(1);
        return res.body[0];
      },
      30_000,
      'the quote listed',
    );
    expect(listed.uri).toBe(noteId);
    expect(listed.quote).toMatchObject({ state: 'accepted', quoted_status: { id: quoted.body.id } });
    expect((await ours.call('GET', `/api/v1/statuses/${quoted.body.id}`, alice.token)).body.quotes_count).toBe(1);
    await settles(
      async () => {
        const res = await ours.call('GET', '/api/v1/notifications?types[]=quote', alice.token);
        expect(res.body.map((n: { status: { id: string } }) => n.status.id)).toContain(listed.id);
      },
      30_000,
      'quote notification',
    );

    // Alice revokes: the stamp's Delete reaches the peer, and the stamp is gone.
    const revoked = await ours.call(
      'POST',
      `/api/v1/statuses/${quoted.body.id}/quotes/${listed.id}/revoke`,
      alice.token,
    );
    expect(revoked.body.quote.state).toBe('revoked');
    await settles(
      async () => {
        expect(await received()).toContainEqual(expect.objectContaining({ type: 'Delete', object: accept.result }));
      },
      30_000,
      'the Delete of the stamp at the peer',
    );
  });

  it('a post nobody may quote: our Reject answers its QuoteRequest', async () => {
    const closed = await ours.call('POST', '/api/v1/statuses', alice.token, {
      status: 'not for quoting',
      quote_approval_policy: 'nobody',
    });
    // Mastodon names only the author for a post nobody else may quote.
    expect(await control('read', { uri: closed.body.uri })).toMatchObject({
      type: 'Note',
      canQuoteAutomatic: [aliceUri],
    });
    const noteId = `${peerUrl}/notes/quote-2`;
    await control('quote', { target: aliceUri, quoted: closed.body.uri, id: noteId, content: '<p>may I?</p>' });
    await settles(
      async () => {
        expect(await received()).toContainEqual(
          expect.objectContaining({ type: 'Reject', object: `${noteId}/quote_request` }),
        );
      },
      30_000,
      'our Reject',
    );
    expect((await ours.call('GET', `/api/v1/statuses/${closed.body.id}/quotes`, alice.token)).body).toEqual([]);
  });

  it('we quote a Fedify post: our QuoteRequest, its Accept with a stamp, its Delete of the stamp revokes', async () => {
    const noteId = `${peerUrl}/notes/open-1`;
    await control('publish', { id: noteId, content: '<p>quote me from Fedify</p>', quotePolicy: 'public' });
    const quotedHere = await resolve(noteId);
    const quoting = await ours.call('POST', '/api/v1/statuses', bob.token, {
      status: 'quoting Fedify',
      quoted_status_id: quotedHere.id,
    });
    expect(quoting.status).toBe(200);
    expect(quoting.body.quote.state).toBe('pending');

    const request = await settles(
      async () => {
        const r = (await received()).find((x) => x.type === 'QuoteRequest' && x.instrument === quoting.body.uri);
        expect(r).toBeDefined();
        return r!;
      },
      30_000,
      'our QuoteRequest at the peer',
    );
    expect(request.object).toBe(noteId);

    const stamp = `${peerUrl}/stamps/1`;
    await control('answer', {
      target: `${ours.url}/users/bob`,
      request: request.id,
      quoted: noteId,
      quoting: quoting.body.uri,
      decision: 'accept',
      stamp,
    });
    const accepted = await settles(
      async () => {
        const res = await ours.call('GET', `/api/v1/statuses/${quoting.body.id}`, bob.token);
        expect(res.body.quote.state).toBe('accepted');
        return res.body;
      },
      30_000,
      'our quote accepted',
    );
    expect(accepted.quote.quoted_status.id).toBe(quotedHere.id);
    // Our Note names the quote and now carries the peer's stamp, as Fedify reads it (read once:
    // Fedify caches what it fetched).
    expect(await control('read', { uri: quoting.body.uri })).toMatchObject({
      type: 'Note',
      quote: noteId,
      quoteAuthorization: stamp,
    });

    await control('revoke', { target: `${ours.url}/users/bob`, stamp });
    await settles(
      async () => {
        const res = await ours.call('GET', `/api/v1/statuses/${quoting.body.id}`, bob.token);
        expect(res.body.quote).toEqual({ state: 'revoked', quoted_status: null });
      },
      30_000,
      'our quote revoked',
    );
  });

  it('a stamp is fetched again after a week: still served it stays, gone (no Delete) the quote is revoked', async () => {
    const noteId = `${peerUrl}/notes/open-2`;
    await control('publish', { id: noteId, content: '<p>quote me for a while</p>', quotePolicy: 'public' });
    const quotedHere = await resolve(noteId);
    const quoting = await ours.call('POST', '/api/v1/statuses', bob.token, {
      status: 'quoting for a while',
      quoted_status_id: quotedHere.id,
    });
    const request = await settles(
      async () => {
        const r = (await received()).find((x) => x.type === 'QuoteRequest' && x.instrument === quoting.body.uri);
        expect(r).toBeDefined();
        return r!;
      },
      30_000,
      'our QuoteRequest at the peer',
    );
    const stamp = `${peerUrl}/stamps/2`;
    await control('answer', {
      target: `${ours.url}/users/bob`,
      request: request.id,
      quoted: noteId,
      quoting: quoting.body.uri,
      decision: 'accept',
      stamp,
    });
    const state = async () =>
      (await ours.call('GET', `/api/v1/statuses/${quoting.body.id}`, bob.token)).body.quote.state;
    await settles(async () => expect(await state()).toBe('accepted'), 30_000, 'our quote accepted');
    const refreshAt = async () =>
      (await collection(ours.core.db, statuses).findOne({ _id: BigInt(quoting.body.id) }))?.quote?.refreshAt;
    const first = await refreshAt();
    expect(first!.getTime()).toBeGreaterThan(Date.now() + 6 * 86_400_000);

    // Not due yet: nothing is fetched.
    expect(await refreshStaleQuotes(ours.core)).toBe(0);
    // A week on: the stamp is still served, the quote stays and is checked again a week later.
    const weekOn = first!.getTime() + 1000;
    expect(await refreshStaleQuotes(ours.core, { now: weekOn })).toBeGreaterThanOrEqual(1);
    expect(await state()).toBe('accepted');
    expect((await refreshAt())!.getTime()).toBeGreaterThan(weekOn + 6 * 86_400_000);

    // The peer stops serving it without a Delete: the next check revokes the quote.
    expect(await control('forget', { stamp })).toEqual({ forgotten: true });
    expect(await refreshStaleQuotes(ours.core, { now: weekOn + 8 * 86_400_000 })).toBeGreaterThanOrEqual(1);
    expect(await ours.call('GET', `/api/v1/statuses/${quoting.body.id}`, bob.token)).toMatchObject({
      body: { quote: { state: 'revoked', quoted_status: null } },
    });
    expect(await refreshAt()).toBeUndefined();
  });

  it('a Fedify post that asks for manual approval: its Reject leaves our quote rejected', async () => {
    const noteId = `${peerUrl}/notes/manual-1`;
    await control('publish', { id: noteId, content: '<p>ask first</p>', quotePolicy: 'manual' });
    const quotedHere = await resolve(noteId);
    const quoting = await ours.call('POST', '/api/v1/statuses', bob.token, {
      status: 'asking Fedify',
      quoted_status_id: quotedHere.id,
    });
    expect(quoting.status).toBe(200);
    expect(quoting.body.quote.state).toBe('pending');
    const request = await settles(
      async () => {
        const r = (await received()).find((x) => x.type === 'QuoteRequest' && x.instrument === quoting.body.uri);
        expect(r).toBeDefined();
        return r!;
      },
      30_000,
      'our QuoteRequest at the peer',
    );
    await control('answer', {
      target: `${ours.url}/users/bob`,
      request: request.id,
      quoted: noteId,
      quoting: quoting.body.uri,
      decision: 'reject',
    });
    await settles(
      async () => {
        const res = await ours.call('GET', `/api/v1/statuses/${quoting.body.id}`, bob.token);
        expect(res.body.quote).toEqual({ state: 'rejected', quoted_status: null });
      },
      30_000,
      'our quote rejected',
    );
  });

  it('revoking a local quote of a local post sends the stamp’s Delete to the quoted post’s audience', async () => {
    // Bob (local) quotes Alice (local); the peer follows Alice, so it shows the quote's target.
    const quoted = await ours.call('POST', '/api/v1/statuses', alice.token, { status: 'quoted at home' });
    const quoting = await ours.call('POST', '/api/v1/statuses', bob.token, {
      status: 'a local quote',
      quoted_status_id: quoted.body.id,
    });
    expect(quoting.body.quote.state).toBe('accepted');
    const revoked = await ours.call(
      'POST',
      `/api/v1/statuses/${quoted.body.id}/quotes/${quoting.body.id}/revoke`,
      alice.token,
    );
    expect(revoked.body.quote.state).toBe('revoked');
    const stamp = `${aliceUri}/quote_authorizations/${quoting.body.id}`;
    await settles(
      async () => {
        expect(await received()).toContainEqual(expect.objectContaining({ type: 'Delete', object: stamp }));
      },
      30_000,
      'the Delete of the stamp at the follower peer',
    );
  });
});
