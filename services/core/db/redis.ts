import { Redis } from 'ioredis';
import type { Socket } from 'node:net';

export type { Redis };

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

/** A Redis connection whose every key is prefixed with the deployment's namespace (if any). */
export function connectRedis(url: string, opts: { namespace?: string; lazy?: boolean } = {}): Redis {
  const redis = new Redis(url, {
    lazyConnect: opts.lazy ?? false,
    maxRetriesPerRequest: 3,
    keyPrefix: opts.namespace ? `${opts.namespace}:` : undefined,
  });
  coalesceWritesPerTurn(redis);
  return redis;
}
