// connectRedis corks each socket for the rest of the event-loop turn (services/core/db/redis.ts):
// the commands of one turn must arrive in order and answer each their own, and a connection that
// Redis drops must work again on its new socket.
import { connectRedis, incrementExpiring, type Redis } from '../../../services/core/db/redis.ts';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6390';
const namespace = `redisconn_${process.pid}_${Date.now()}`;
let redis: Redis;

beforeAll(() => {
  redis = connectRedis(url, { namespace });
});
afterAll(async () => {
  const keys = await redis.keys(`${namespace}:*`);
  if (keys.length > 0) await redis.del(...keys.map((k) => k.slice(namespace.length + 1)));
  redis.disconnect();
});

test('the commands of one turn leave in one write, and each gets its own answer, in order', async () => {
  await redis.ping();
  // What reaches the socket's own write functions is what the kernel is asked to send.
  type Low = { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
  const socket = (redis as unknown as { stream: Low }).stream;
  const { _write, _writev } = socket;
  let writes = 0;
  socket._write = (...a) => (writes++, _write.apply(socket, a));
  socket._writev = (...a) => (writes++, _writev.apply(socket, a));
  try {
    const sets = Array.from({ length: 200 }, (_, i) => redis.set(`k${i}`, String(i)));
    await Promise.all(sets);
    expect(writes).toBe(1);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => redis.get(`k${i}`)));
    expect(answers).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
    expect(await Promise.all([redis.incr('n'), redis.incr('n'), redis.incr('n')])).toEqual([1, 2, 3]);
  } finally {
    socket._write = _write;
    socket._writev = _writev;
  }
});

test('a connection Redis drops works again on its new socket', async () => {
  await redis.set('before', '1');
  const id = await redis.client('ID');
  const admin = connectRedis(url);
  try {
    const reconnected = new Promise((resolve) => redis.once('ready', resolve));
    await admin.client('KILL', 'ID', String(id));
    await reconnected;
  } finally {
    admin.disconnect();
  }
  expect(await redis.client('ID')).not.toBe(id);
  const [a, b] = await Promise.all([redis.set('after', '2'), redis.get('before')]);
  expect([a, b]).toEqual(['OK', '1']);
});

test('incrementExpiring counts from 1 and gives a new counter its expiry, which later calls keep', async () => {
  expect(await Promise.all([1, 2, 3].map(() => incrementExpiring(redis, 'counted', 60_000)))).toEqual([1, 2, 3]);
  const ttl = await redis.pttl('counted');
  expect(ttl).toBeGreaterThan(55_000);
  expect(ttl).toBeLessThanOrEqual(60_000);
  // A later call neither resets the count nor pushes the expiry out.
  await redis.pexpire('counted', 30_000);
  expect(await incrementExpiring(redis, 'counted', 60_000)).toBe(4);
  expect(await redis.pttl('counted')).toBeLessThanOrEqual(30_000);
});
