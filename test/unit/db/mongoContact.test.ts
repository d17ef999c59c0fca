// The MongoDB contact watcher: liveness from the process's own pings, and the reset of a client
// whose pings go unanswered while a new connection reaches MongoDB (a stuck driver). The client
// is a stand-in whose ping answers or hangs as each test says.
import type { Db } from 'mongodb';
import { watchMongoContact, type MongoContact } from '../../../services/core/db/mongoContact.ts';
import { eventually } from '../../support/eventually.ts';

const hang = () => new Promise<never>(() => undefined);

function fakeDb(answers: () => boolean): Db {
  return { command: () => (answers() ? Promise.resolve({ ok: 1 }) : hang()) } as unknown as Db;
}

/** `eventually` of a synchronous check. */
const until = (check: () => boolean, what: string) => eventually(async () => check(), 5_000, what);

let contact: MongoContact | null = null;
afterEach(() => contact?.stop());

test('a client whose pings hang while a new connection answers is reset once, then answers again', async () => {
  let stuck = true;
  let resets = 0;
  contact = watchMongoContact(
    fakeDb(() => !stuck),
    {
      limitMs: 10_000,
      intervalMs: 20,
      timeoutMs: 10,
      resetAfterMs: 150,
      reachable: async () => true,
      reset: async () => {
        resets++;
        stuck = false; // a new client and monitor
      },
    },
  );
  await until(() => resets > 0, 'the reset');
  await until(() => contact!.silentMs() < 100, 'an answer after the reset');
  expect(resets).toBe(1);
  expect(contact.lost()).toBe(false);
});

test('no reset while MongoDB does not answer a new connection either (it is down, not the client)', async () => {
  let asked = 0;
  let resets = 0;
  contact = watchMongoContact(
    fakeDb(() => false),
    {
      limitMs: 100,
      intervalMs: 20,
      timeoutMs: 10,
      resetAfterMs: 50,
      reachable: async () => {
        asked++;
        return false;
      },
      reset: async () => {
        resets++;
      },
    },
  );
  // Lost once the limit has passed (a timing the machine decides: wait for it, then look back).
  await until(() => asked >= 3 && contact!.lost(), 'three checks of a new connection, then the limit');
  expect(resets).toBe(0);
});

test('a client that finds MongoDB again by itself soon after it is back is not reset, however long it was down', async () => {
  // MongoDB is down for 400 ms (longer than the period), back from then on; the client finds it
  // 100 ms after that (its monitor's next heartbeat).
  const start = Date.now();
  let answered = 0;
  let resets = 0;
  contact = watchMongoContact(
    fakeDb(() => {
      if (Date.now() - start < 500) return false;
      answered++;
      return true;
    }),
    {
      limitMs: 10_000,
      intervalMs: 20,
      timeoutMs: 10,
      resetAfterMs: 300,
      reachable: async () => Date.now() - start >= 400,
      reset: async () => {
        resets++;
      },
    },
  );
  await until(() => answered >= 10, 'ten answers after the outage');
  expect(resets).toBe(0);
});

test('a client that answers is never checked against a new connection', async () => {
  let pings = 0;
  let asked = 0;
  contact = watchMongoContact(
    fakeDb(() => {
      pings++;
      return true;
    }),
    {
      limitMs: 100,
      intervalMs: 20,
      timeoutMs: 10,
      resetAfterMs: 30,
      reachable: async () => {
        asked++;
        return true;
      },
      reset: async () => undefined,
    },
  );
  await until(() => pings >= 5, 'five pings');
  expect(asked).toBe(0);
  expect(contact.lost()).toBe(false);
});
