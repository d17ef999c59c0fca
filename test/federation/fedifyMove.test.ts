// Account migration with an independent implementation, the Fedify peer (fedifyPeer/server.ts,
// @fedify/vocab's Move and the actor's alsoKnownAs/movedTo), both ways, as Mastodon does it:
// - a local account moves to an account on the peer that names it as an alias: our server reads
//   the alias from the peer's actor, the Move reaches the peer (a follower's server), and our
//   local followers follow the new account there (the peer accepts);
// - an account on the peer moves to another one there: its Move reaches our inbox, we check the
//   new actor's alias, mark the old account as moved, and our local followers follow the new one.
import { moveAccount } from '../../services/core/accounts/migration.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { createTestUser, type TestUser } from '../support/fixtures.ts';
import { startFedifyPeer, type FedifyPeer } from './fedifyPeer/control.ts';
import { runTestDelivery, settles, startInstance, type Instance } from './support.ts';

jest.setTimeout(120_000);

interface Received {
  type: string;
  id: string | null;
  actor: string | null;
  object: string | null;
  target?: string | null;
}

describe('moving accounts with a Fedify peer', () => {
  let ours: Instance;
  let peer: FedifyPeer;
  let delivery: { stop(): Promise<void> };

  beforeAll(async () => {
    ours = await startInstance();
    delivery = await runTestDelivery(ours.core);
    peer = await startFedifyPeer();
  });
  afterAll(async () => {
    await peer?.stop();
    await delivery?.stop();
    await ours?.close();
  });

  const received = async (): Promise<Received[]> => (await peer.control('received')) as Received[];
  const lookup = async (acct: string, viewer: TestUser): Promise<string> => {
    const res = await ours.call('GET', `/api/v1/accounts/lookup?acct=${acct}`, viewer.token);
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  const relationships = async (viewer: TestUser, ids: string[]) =>
    (await ours.call('GET', `/api/v1/accounts/relationships?${ids.map((i) => `id[]=${i}`).join('&')}`, viewer.token))
      .body as Array<{ id: string; following: boolean; requested: boolean; notifying: boolean }>;

  it('a local account moves to the Fedify peer: the peer gets the Move, local followers follow there', async () => {
    const mover = await createTestUser(ours.core, { username: 'mover' });
    const fan = await createTestUser(ours.core, { username: 'fan' });
    const moverUri = `${ours.url}/users/mover`;
    // carol on the peer follows mover (so the peer is a follower's server), and so does fan here.
    await peer.control('follow', { target: moverUri, id: `${peer.url}/follows/mover` });
    expect(
      (await ours.call('POST', `/api/v1/accounts/${mover.account._id}/follow`, fan.token, { notify: true })).status,
    ).toBe(200);
    await settles(
      async () => {
        const res = await ours.call('GET', `/api/v1/accounts/${mover.account._id}/followers`, mover.token);
        expect(res.body.map((x: { acct: string }) => x.acct).sort()).toEqual([`carol@${peer.domain}`, 'fan']);
      },
      30_000,
      'mover has both followers',
    );

    // The new account on the peer names mover as its former account (alsoKnownAs).
    const { uri: daveUri } = await peer.control('person', { name: 'dave', aliases: moverUri });
    const moved = await moveAccount(ours.core, mover.account, mover.user, {
      acct: `dave@${peer.domain}`,
      password: mover.password,
    });
    const dave = await collection(ours.core.db, accounts).findOne({ uri: daveUri });
    expect(dave?.alsoKnownAs).toEqual([moverUri]);
    expect(moved.movedToAccountId).toBe(dave!._id);

    // The peer got the Move (and the actor's Update before it) ...
    await settles(
      async () => {
        expect(await received()).toContainEqual(
          expect.objectContaining({ type: 'Move', actor: moverUri, object: moverUri, target: daveUri }),
        );
      },
      40_000,
      'the Move at the Fedify peer',
    );
    // ... fan's Follow of dave reached the peer, which accepted it, and fan no longer follows mover.
    await settles(
      async () => {
        expect(await received()).toContainEqual(
          expect.objectContaining({ type: 'Follow', actor: `${ours.url}/users/fan`, object: daveUri }),
        );
        const [toDave, toMover] = await relationships(fan, [String(dave!._id), String(mover.account._id)]);
        expect(toDave).toMatchObject({ following: true, requested: false, notifying: true });
        expect(toMover).toMatchObject({ following: false });
      },
      40_000,
      'fan follows dave on the peer',
    );
    const shown = await ours.call('GET', `/api/v1/accounts/${mover.account._id}`, fan.token);
    expect(shown.body.moved).toMatchObject({ acct: `dave@${peer.domain}` });
  });

  it('an account on the Fedify peer moves: its Move reaches us and local followers follow the new account', async () => {
    const { uri: erinUri } = await peer.control('person', { name: 'erin', display: 'Erin on Fedify' });
    const watcher = await createTestUser(ours.core, { username: 'watcher' });
    const erinId = await lookup(`erin@${peer.domain}`, watcher);
    expect((await ours.call('POST', `/api/v1/accounts/${erinId}/follow`, watcher.token)).status).toBe(200);
    // The peer accepts: watcher follows erin.
    await settles(
      async () => expect((await relationships(watcher, [erinId]))[0]).toMatchObject({ following: true }),
      30_000,
      'watcher follows erin',
    );

    // A Move that the new account does not back (no alias) changes nothing.
    const { uri: stranger } = await peer.control('person', { name: 'stranger' });
    await peer.control('move', { from: 'erin', to: stranger, target: `${ours.url}/users/watcher` });
    // erin moves to frank, who names erin as his former account.
    const { uri: frankUri } = await peer.control('person', { name: 'frank', aliases: erinUri });
    await peer.control('move', { from: 'erin', to: frankUri, target: `${ours.url}/users/watcher` });

    await settles(
      async () => {
        const frank = await collection(ours.core.db, accounts).findOne({ uri: frankUri });
        expect(frank).not.toBeNull();
        const [toFrank, toErin] = await relationships(watcher, [String(frank!._id), erinId]);
        expect(toFrank).toMatchObject({ following: true });
        expect(toErin).toMatchObject({ following: false });
      },
      40_000,
      'watcher follows frank instead of erin',
    );
    const erin = await ours.call('GET', `/api/v1/accounts/${erinId}`, watcher.token);
    expect(erin.body.moved).toMatchObject({ acct: `frank@${peer.domain}` });
    // The peer gets watcher's Follow of frank and the Undo of the follow of erin: two deliveries,
    // each after the relationship changed here, so waited for rather than read once.
    await settles(
      async () => {
        const seen = await received();
        expect(seen).toContainEqual(
          expect.objectContaining({ type: 'Follow', actor: `${ours.url}/users/watcher`, object: frankUri }),
        );
        expect(seen).toContainEqual(expect.objectContaining({ type: 'Undo', actor: `${ours.url}/users/watcher` }));
      },
      40_000,
      'the Follow of frank and the Undo of erin at the Fedify peer',
    );
    // The unbacked Move was read (its target fetched and found without the alias) and ignored.
    const strangerDoc = await settles(
      async () => {
        const doc = await collection(ours.core.db, accounts).findOne({ uri: stranger });
        expect(doc).not.toBeNull();
        return doc!;
      },
      20_000,
      'the stranger fetched',
    );
    expect((await relationships(watcher, [String(strangerDoc._id)]))[0]).toMatchObject({ following: false });
  });
});
