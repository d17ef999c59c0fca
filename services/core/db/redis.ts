import { Redis } from 'ioredis';

export type { Redis };

export function connectRedis(url: string, opts: { lazy?: boolean } = {}): Redis {
  return new Redis(url, { lazyConnect: opts.lazy ?? false, maxRetriesPerRequest: 3, enableAutoPipelining: true });
}
