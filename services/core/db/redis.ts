import { Cluster, Redis } from 'ioredis';
import type { ChainableCommander } from 'ioredis';
import type { Socket } from 'node:net';
import { keySlot } from './hashSlot.ts';

export type { Redis };

/** Where Redis is: a single server (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES, when set). */
export interface RedisTarget {
  redisUrl: string;
  redisClusterNodes: string[];
}

/**
 * Sends every command a process issues in one event-loop turn in one write (the socket is corked
 * until the turn's check phase), without waiting for earlier replies. ioredis's own
 * auto-pipelining batches too, but keeps one batch in flight per connection: under load each
 * request's commands wait for the previous batch's replies, requests pile up, their objects
 * outlive young-generation collections and are promoted, and the collector's pauses grow (the
 * timelines benchmark measured 7-10 ms scavenges with it, under 4 ms with this, and less CPU).
 */
function coalesceWritesPerTurn(redis: Redis): void {
  // ioredis makes a new socket on every (re)connection and announces it with 'connect'.
  redis.on('connect', () => {
    const socket = (redis as unknown as { stream: Socket }).stream;
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    let corked = false;
    const flush = () => {
      corked = false;
      socket.uncork();
    };
    socket.write = ((...args: unknown[]) => {
      if (!corked) {
        corked = true;
        socket.cork();
        setImmediate(flush);
      }
      return write(...args);
    }) as Socket['write'];
  });
}

/**
 * A Redis connection whose every key is prefixed with the deployment's namespace (if any). With
 * cluster nodes it is ioredis's `Cluster`, typed as `Redis`: both offer the same commands, and
 * everything here keeps a command's (and a script's) keys in one hash slot. Code that would send
 * one pipeline over keys of several slots uses `batch` instead of `pipeline()`.
 */
export function connectRedis(
  target: string | RedisTarget,
  opts: { namespace?: string; lazy?: boolean; checkSlots?: boolean } = {},
): Redis {
  const keyPrefix = opts.namespace ? `${opts.namespace}:` : undefined;
  const url = typeof target === 'string' ? target : target.redisUrl;
  const nodes = typeof target === 'string' ? [] : target.redisClusterNodes;
  if (nodes.length === 0) {
    const redis = new Redis(url, { lazyConnect: opts.lazy ?? false, maxRetriesPerRequest: 3, keyPrefix });
    coalesceWritesPerTurn(redis);
    if (opts.checkSlots ?? process.env.REDIS_SLOT_CHECK === '1') checkSlots(redis);
    return redis;
  }
  const auth = new URL(url);
  const cluster = new Cluster(
    nodes.map((n) => {
      const at = n.lastIndexOf(':');
      return { host: n.slice(0, at), port: Number(n.slice(at + 1)) };
    }),
    {
      lazyConnect: opts.lazy ?? false,
      keyPrefix,
      // Every connection to a node corks per turn like the single connection: a turn's commands
      // for one node leave in one write, so no cross-node pipeline is needed (see `batch`).
      redisOptions: {
        maxRetriesPerRequest: 3,
        username: auth.username ? decodeURIComponent(auth.username) : undefined,
        password: auth.password ? decodeURIComponent(auth.password) : undefined,
        tls: auth.protocol === 'rediss:' ? {} : undefined,
      },
    },
  );
  cluster.on('+node', (node: Redis) => coalesceWritesPerTurn(node));
  return cluster as unknown as Redis;
}

export function isCluster(redis: Redis): boolean {
  return (redis as unknown as { isCluster?: boolean }).isCluster === true;
}

const SLOTS_CHECKED = Symbol('slotsChecked');

/**
 * Whether work over many keys must be cut per hash slot: on a cluster, and on a single Redis that
 * checks slots (REDIS_SLOT_CHECK=1), which then takes the cluster's per-slot paths.
 */
export function slotsApart(redis: Redis): boolean {
  return isCluster(redis) || (redis as unknown as Record<symbol, boolean>)[SLOTS_CHECKED] === true;
}

interface KeyedCommand {
  name: string;
  getKeys(): (string | Buffer)[];
  reject(err: Error): void;
  promise: Promise<unknown>;
}

const crossSlot = (keys: (string | Buffer)[]) =>
  keys.length > 1 && new Set(keys.map((k) => keySlot(k.toString()))).size > 1;

const crossSlotError = (what: string, keys: (string | Buffer)[]) =>
  new Error(`CROSSSLOT Keys in request don't hash to the same slot (REDIS_SLOT_CHECK: ${what} ${keys.join(' ')})`);

/**
 * Makes a single Redis refuse what a Redis Cluster refuses: a command, a script's declared keys or
 * a MULTI transaction whose keys span hash slots fail with CROSSSLOT, so a regression shows in a
 * run on one Redis (`REDIS_SLOT_CHECK=1 npm test -- FILE`) without starting a cluster. Plain
 * pipelines are not checked: on a cluster `batch` sends their commands one by one. Keys a script
 * derives inside Lua cannot be seen here; only the cluster run finds those.
 */
function checkSlots(redis: Redis): void {
  (redis as unknown as Record<symbol, boolean>)[SLOTS_CHECKED] = true;
  const target = redis as unknown as { sendCommand(c: KeyedCommand, ...rest: unknown[]): unknown };
  const send = target.sendCommand.bind(redis);
  target.sendCommand = (command: KeyedCommand, ...rest: unknown[]) => {
    const keys = command.getKeys();
    if (!crossSlot(keys)) return send(command, ...rest);
    command.reject(crossSlotError(command.name, keys));
    return command.promise;
  };
  const multi = redis.multi.bind(redis) as (...args: unknown[]) => ChainableCommander;
  (redis as unknown as { multi: typeof multi }).multi = (...args: unknown[]) => {
    const transaction = multi(...args);
    const exec = transaction.exec.bind(transaction);
    transaction.exec = (async (...execArgs: Parameters<typeof exec>) => {
      const queued = (transaction as unknown as { _queue: KeyedCommand[] })._queue;
      const keys = queued.flatMap((c) => c.getKeys());
      if (crossSlot(keys)) throw crossSlotError('MULTI', keys);
      return exec(...execArgs);
    }) as typeof exec;
    return transaction;
  };
}

/**
 * A pipeline whose commands may touch keys of different slots. On a single Redis it is
 * `redis.pipeline()` (one write, one round trip). On a cluster, ioredis sends a pipeline to one
 * node only, so the commands are sent one by one instead: the per-node corking above still puts
 * each node's share of the turn into one write, the nodes answer in parallel, and `exec` gives
 * the same `[error, result]` list in order.
 */
export function batch(redis: Redis): ChainableCommander {
  if (!slotsApart(redis)) return redis.pipeline();
  const queued: Promise<unknown>[] = [];
  const proxy: ChainableCommander = new Proxy({} as ChainableCommander, {
    get(_target, name) {
      if (name === 'exec')
        return async () => {
          const settled = await Promise.allSettled(queued);
          return settled.map((r) => (r.status === 'fulfilled' ? [null, r.value] : [r.reason, null]));
        };
      if (name === 'length') return queued.length;
      if (name === 'then') return undefined;
      return (...args: unknown[]) => {
        const method = (redis as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name as string];
        if (typeof method !== 'function') throw new Error(`batch: no Redis command ${String(name)}`);
        const p = method.apply(redis, args);
        p.catch(() => undefined); // reported through exec
        queued.push(p);
        return proxy;
      };
    },
  });
  return proxy;
}

/**
 * INCR of a counter that expires `ttlMs` after its creation. Two plain commands, sent in one write:
 * SET NX gives a new counter its expiry before the INCR, so none is left without one; a MULTI
 * cost the API two more commands and a pipeline object per call.
 */
export async function incrementExpiring(redis: Redis, key: string, ttlMs: number): Promise<number> {
  const [, seq] = await Promise.all([redis.set(key, 0, 'PX', ttlMs, 'NX'), redis.incr(key)]);
  return seq;
}
