// Quote posts between two instances of this server (FEP-044f as Mastodon 4.5 speaks it): a quote
// of a remote post waits for approval, the QuoteRequest is answered with an Accept carrying a
// QuoteAuthorization stamp that its author's server serves, the quoted author is notified and
// counts the quote; revoking sends the stamp's Delete and the quoter's server shows the quote
// revoked; a post nobody may quote gets a Reject; the Note carries quote, quoteAuthorization,
// the legacy forms and interactionPolicy.canQuote.
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { settles, startFederatingPair, type FederatingPair, type Instance } from './support.ts';

jest.setTimeout(180_000);

const AP = { accept: 'application/activity+json' };
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents are checked field by field
const document = (url: string): Promise<any> => fetch(url, { headers: AP }).then((r) => r.json());

describe('quote posts between two instances', () => {
  let a: Instance;
  let b: Instance;
  let pair: FederatingPair | undefined;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    pair = await startFederatingPair();
    ({ a, b } = pair);
    alice = await createTestUser(a.core, { username: 'alice' });
    bob = await createTestUser(b.core, { username: 'bob' });
  });

  afterAll(async () => {
    await pair?.close();
  });

  /** Alice's post as B knows it (B fetches it by URL, as a search would). */
  async function onB(uri: string): Promise<{ id: string }> {
    const res = await b.call(
      'GET',
      `/api/v2/search?resolve=true&type=statuses&q=${encodeURIComponent(uri)}`,
      bob.token,
    );
    expect(res.status).toBe(200);
    expect(res.body.statuses).toHaveLength(1);
    return res.body.statuses[0];
  }

  it('request, accept with a stamp, notification and count, revocation by Delete of the stamp', async () => {
    const quoted = await a.call('POST', '/api/v1/statuses', alice.token, { status: 'quote me from afar' });
    expect(quoted.status).toBe(200);
    const quotedOnB = await onB(quoted.body.uri);

    const quoting = await b.call('POST', '/api/v1/statuses', bob.token, {
      status: 'quoting alice across servers',
      quoted_status_id: quotedOnB.id,
    });
    expect(quoting.status).toBe(200);
    expect(quoting.body.quote.state).toBe('pending');
    expect(quoting.body.quote.quoted_status).toBeNull();

    // B's Note names the quote in every form Mastodon writes, with the RE: line.
    const note = await document(quoting.body.uri);
    expect(note.quote).toBe(quoted.body.uri);
    expect(note.quoteUri).toBe(quoted.body.uri);
    expect(note._misskey_quote).toBe(quoted.body.uri);
    expect(note.content).toContain('class="quote-inline"');
    expect(note.interactionPolicy.canQuote.automaticApproval).toEqual(['https://www.w3.org/ns/activitystreams#Public']);

    // A accepts: B's quote becomes accepted, with A's stamp.
    const accepted = await settles(
      async () => {
        const res = await b.call('GET', `/api/v1/statuses/${quoting.body.id}`, bob.token);
        expect(res.body.quote.state).toBe('accepted');
        return res.body;
      },
      30_000,
      'quote accepted on B',
    );
    expect(accepted.quote.quoted_status.id).toBe(quotedOnB.id);

    // On A: bob's post is known with its quote accepted, alice is notified, the count is 1.
    const onA = await settles(
      async () => {
        const res = await a.call('GET', `/api/v1/statuses/${quoted.body.id}/quotes`, alice.token);
        expect(res.body).toHaveLength(1);
        return res.body[0];
      },
      30_000,
      'the quote listed on A',
    );
    expect(onA.uri).toBe(quoting.body.uri);
    expect(onA.quote.quoted_status.id).toBe(quoted.body.id);
    expect((await a.call('GET', `/api/v1/statuses/${quoted.body.id}`, alice.token)).body.quotes_count).toBe(1);
    await settles(
      async () => {
        const res = await a.call('GET', '/api/v1/notifications?types[]=quote', alice.token);
        expect(res.body.map((n: { status: { id: string } }) => n.status.id)).toContain(onA.id);
      },
      30_000,
      'quote notification on A',
    );

    // The stamp: served by A, same host as its author, naming both posts; B's Note carries it.
    const stampUri = `${a.url}/users/alice/quote_authorizations/${onA.id}`;
    const stamp = await document(stampUri);
    expect(stamp).toMatchObject({
      id: stampUri,
      type: 'QuoteAuthorization',
      attributedTo: `${a.url}/users/alice`,
      interactingObject: quoting.body.uri,
      interactionTarget: quoted.body.uri,
    });
    await settles(
      async () => {
        const again = await document(quoting.body.uri);
        expect(again.quoteAuthorization).toBe(stampUri);
      },
      10_000,
      "the stamp in B's Note",
    );

    // Alice revokes: A deletes the stamp, B shows the quote revoked.
    const revoked = await a.call('POST', `/api/v1/statuses/${quoted.body.id}/quotes/${onA.id}/revoke`, alice.token);
    expect(revoked.status).toBe(200);
    expect(revoked.body.quote.state).toBe('revoked');
    expect((await fetch(stampUri, { headers: AP })).status).toBe(404);
    await settles(
      async () => {
        const res = await b.call('GET', `/api/v1/statuses/${quoting.body.id}`, bob.token);
        expect(res.body.quote).toEqual({ state: 'revoked', quoted_status: null });
      },
      30_000,
      'quote revoked on B',
    );
  });

  it('a post nobody may quote: refused locally when B knows it, rejected by A when B does not', async () => {
    const closed = await a.call('POST', '/api/v1/statuses', alice.token, {
      status: 'not for quoting',
      quote_approval_policy: 'nobody',
    });
    const closedOnB = await onB(closed.body.uri);
    // canQuote.automaticApproval names only the author: nobody, as Mastodon parses it.
    const copy = await b.call('GET', `/api/v1/statuses/${closedOnB.id}`, bob.token);
    expect(copy.body.quote_approval).toEqual({ automatic: [], manual: [], current_user: 'denied' });
    const refused = await b.call('POST', '/api/v1/statuses', bob.token, {
      status: 'trying anyway',
      quoted_status_id: closedOnB.id,
    });
    expect(refused.status).toBe(404);

    // B knew the post as quotable; alice closes it afterwards (B, not following her, is not told).
    const later = await a.call('POST', '/api/v1/statuses', alice.token, { status: 'closing soon' });
    const laterOnB = await onB(later.body.uri);
    expect(
      (
        await a.call('PUT', `/api/v1/statuses/${later.body.id}/interaction_policy`, alice.token, {
          quote_approval_policy: 'nobody',
        })
      ).status,
    ).toBe(200);
    const quoting = await b.call('POST', '/api/v1/statuses', bob.token, {
      status: 'too late',
      quoted_status_id: laterOnB.id,
    });
    expect(quoting.status).toBe(200);
    expect(quoting.body.quote.state).toBe('pending');
    await settles(
      async () => {
        const res = await b.call('GET', `/api/v1/statuses/${quoting.body.id}`, bob.token);
        expect(res.body.quote).toEqual({ state: 'rejected', quoted_status: null });
      },
      30_000,
      'quote rejected on B',
    );
    expect((await a.call('GET', `/api/v1/statuses/${later.body.id}`, alice.token)).body.quotes_count).toBe(0);
  });
});
