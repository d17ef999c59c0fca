// deploy/local/redisCluster.ts: six redis-server processes become a cluster of three primaries and
// three replicas serving every slot, the server's cluster client works with it, a second start
// reuses it (nodes.conf), and stop returns only when every node process has exited.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { redisClusterStatus, startRedisCluster, stopRedisCluster } from '../../../deploy/local/redisCluster.ts';
import { connectRedis } from '../../../services/core/db/redis.ts';
import { unusedPort } from '../../support/processes.ts';
import { hasLiveThreads } from '../../../deploy/local/processes.ts';

const BUS_OFFSET = 100;
const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
const ports: number[] = [];

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

beforeAll(async () => {
  // Six ports whose cluster bus ports (BUS_OFFSET above) are free too. Chosen here, not bound by
  // the nodes: Redis's `port 0` turns its TCP listener off, and a cluster node needs one.
  while (ports.length < 6) {
    const p = await unusedPort();
    if (!ports.includes(p) && !ports.includes(p + BUS_OFFSET) && (await free(p + BUS_OFFSET))) ports.push(p);
  }
});

afterAll(async () => {
  await stopRedisCluster(dir);
  rmSync(dir, { recursive: true, force: true });
});

test('starts, serves every slot through the cluster client, restarts from nodes.conf, stops', async () => {
  const { nodes } = await startRedisCluster({ dir, ports, busPortOffset: BUS_OFFSET });
  expect(nodes).toEqual(ports.map((p) => `127.0.0.1:${p}`));
  const status = await redisClusterStatus(dir, ports);
  expect(status.state).toBe('ok');
  expect(status.nodes.filter((n) => n.role === 'master')).toHaveLength(3);
  expect(status.nodes.filter((n) => n.role === 'slave')).toHaveLength(3);
  expect(status.nodes.every((n) => n.pid !== null && n.state === 'ready')).toBe(true);

  const redis = connectRedis({ redisUrl: 'redis://127.0.0.1:1/0', redisClusterNodes: [nodes[0]!] });
  try {
    // Keys in many slots, so every primary takes some.
    await Promise.all(Array.from({ length: 50 }, (_, i) => redis.set(`k${i}`, String(i))));
    expect(await Promise.all(Array.from({ length: 50 }, (_, i) => redis.get(`k${i}`)))).toEqual(
      Array.from({ length: 50 }, (_, i) => String(i)),
    );
  } finally {
    redis.disconnect();
  }

  const pids = status.nodes.map((n) => n.pid!);
  await stopRedisCluster(dir);
  // Exited, not "gone": this test process spawned the nodes, so an exited one stays a zombie until
  // Node reaps it, which may come after stop returns.
  expect(pids.filter((pid) => hasLiveThreads(pid))).toEqual([]);
  expect((await redisClusterStatus(dir, ports)).state).toBe('down');

  // Started again: the same cluster (its data kept with AOF), no new create.
  await startRedisCluster({ dir, ports, busPortOffset: BUS_OFFSET });
  const again = connectRedis({ redisUrl: 'redis://127.0.0.1:1/0', redisClusterNodes: [nodes[3]!] });
  try {
    expect(await again.get('k7')).toBe('7');
  } finally {
    again.disconnect();
  }
}, 120_000);
