// A write retried only when it never reached MongoDB (server selection failed, connection refused).
import { MongoClient, MongoNetworkError, MongoServerSelectionError } from 'mongodb';
import { neverSent, retryUnsent } from '../../../services/core/db/unsentRetry.ts';

/** The driver's own error for a server nobody answers on (port 1 refuses). */
async function selectionError(): Promise<MongoServerSelectionError> {
  const client = new MongoClient('mongodb://127.0.0.1:1/x', { serverSelectionTimeoutMS: 50 });
  const err: unknown = await client.connect().then(
    () => null,
    (e: unknown) => e,
  );
  await client.close();
  if (!(err instanceof MongoServerSelectionError)) throw new Error(`expected a server selection error: ${String(err)}`);
  return err;
}

test('server selection failures and refused connections were never sent; other failures may have been', async () => {
  expect(neverSent(await selectionError())).toBe(true);
  expect(neverSent(new Error('connect ECONNREFUSED 127.0.0.1:27017'))).toBe(true);
  expect(neverSent(new MongoNetworkError('connection 8 to 127.0.0.1:27017 closed'))).toBe(false);
  expect(neverSent(new Error('E11000 duplicate key'))).toBe(false);
  expect(neverSent('ECONNREFUSED')).toBe(false);
});

test('a write refused twice is retried until it lands, once', async () => {
  let calls = 0;
  const result = await retryUnsent(async () => {
    calls++;
    if (calls <= 2) throw new Error('connect ECONNREFUSED 127.0.0.1:27017');
    return 'written';
  }, [1, 1, 1]);
  expect(result).toBe('written');
  expect(calls).toBe(3);
});

test('a write that may have reached MongoDB is not retried', async () => {
  let calls = 0;
  const closed = new MongoNetworkError('connection 8 to 127.0.0.1:27017 closed');
  await expect(
    retryUnsent(async () => {
      calls++;
      throw closed;
    }, [1, 1, 1]),
  ).rejects.toBe(closed);
  expect(calls).toBe(1);
});

test("after the last delay the failure is the caller's", async () => {
  let calls = 0;
  const unselected = await selectionError();
  await expect(
    retryUnsent(async () => {
      calls++;
      throw unselected;
    }, [1, 1]),
  ).rejects.toBe(unselected);
  expect(calls).toBe(3);
});
