import { Redis } from 'ioredis';

export type { Redis };

/** A Redis connection whose every key is prefixed with the deployment's namespace (if any). */
export function connectRedis(url: string, opts: { namespace?: string; lazy?: boolean } = {}): Redis {
  return new Redis(url, {
    lazyConnect: opts.lazy ?? false,
    maxRetriesPerRequest: 3,
    enableAutoPipelining: true,
    keyPrefix: opts.namespace ? `${opts.namespace}:` : undefined,
  });
}
