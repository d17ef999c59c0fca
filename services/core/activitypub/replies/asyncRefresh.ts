// Mastodon 4.4's async refreshes: background work a client may wait for. A Redis hash per
// refresh (`status` running|finished, optional `result_count`), a day while running, an hour once
// finished; its public id is the key signed with SECRET_KEY_BASE, so ids cannot be forged to
// probe other keys. Announced by the `Mastodon-Async-Refresh` header, read at
// GET /api/v1_alpha/async_refreshes/:id.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Core } from '../../context.ts';

const RUNNING_SECONDS = 24 * 3600;
const FINISHED_SECONDS = 3600;
const PREFIX = 'async_refresh:';

export interface AsyncRefresh {
  id: string;
  status: 'running' | 'finished';
  result_count: number | null;
}

function signature(core: Core, key: string): string {
  return createHmac('sha256', `${core.config.secretKeyBase}:async_refreshes`).update(key).digest('base64url');
}

/** The public id of the refresh stored under `key`. */
export function asyncRefreshId(core: Core, key: string): string {
  return `${Buffer.from(key).toString('base64url')}--${signature(core, key)}`;
}

function keyOf(core: Core, id: string): string | null {
  const m = /^([A-Za-z0-9_-]{1,400})--([A-Za-z0-9_-]{43})$/.exec(id);
  if (!m) return null;
  const key = Buffer.from(m[1], 'base64url').toString('utf8');
  const expected = Buffer.from(signature(core, key));
  const given = Buffer.from(m[2]);
  return expected.length === given.length && timingSafeEqual(expected, given) ? key : null;
}

/** Starts a refresh unless one runs already; true when this call started it. */
export async function startAsyncRefresh(core: Core, key: string): Promise<boolean> {
  const started = await core.redis.hsetnx(PREFIX + key, 'status', 'running');
  if (started === 0) {
    if ((await core.redis.hget(PREFIX + key, 'status')) === 'running') return false;
    await core.redis.hset(PREFIX + key, 'status', 'running');
  }
  await core.redis.expire(PREFIX + key, RUNNING_SECONDS);
  return true;
}

export async function isAsyncRefreshRunning(core: Core, key: string): Promise<boolean> {
  return (await core.redis.hget(PREFIX + key, 'status')) === 'running';
}

export async function finishAsyncRefresh(core: Core, key: string): Promise<void> {
  await core.redis.hset(PREFIX + key, 'status', 'finished');
  await core.redis.expire(PREFIX + key, FINISHED_SECONDS);
}

/** Gives up a refresh that could not be started (its job was not queued). */
export async function dropAsyncRefresh(core: Core, key: string): Promise<void> {
  await core.redis.del(PREFIX + key);
}

/** A refresh by its public id; null when unknown, expired or forged. */
export async function findAsyncRefresh(core: Core, id: string): Promise<AsyncRefresh | null> {
  const key = keyOf(core, id);
  if (key === null) return null;
  const data = await core.redis.hgetall(PREFIX + key);
  if (data.status !== 'running' && data.status !== 'finished') return null;
  const count = data.result_count !== undefined ? Number(data.result_count) : null;
  return { id, status: data.status, result_count: count !== null && Number.isFinite(count) ? count : null };
}

/** The `Mastodon-Async-Refresh` header value. */
export function asyncRefreshHeader(core: Core, key: string, retrySeconds = 3): string {
  return `id="${asyncRefreshId(core, key)}", retry=${retrySeconds}`;
}
