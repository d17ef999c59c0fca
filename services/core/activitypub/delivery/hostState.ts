// Per-destination-host delivery state in Redis, shared by every delivery process:
//   dlv:host:<host>     hash: fails (consecutive failed attempts), since (first failure of the
//                       streak, ms), until (backoff end, ms), level (backoff level: which retry
//                       delay applies), tripped (breaker opened at, ms), error (last failure class)
//   dlv:q:<host>        the host's waiting jobs (in delay topics), by queue number: only the
//                       oldest may be tried, and while any waits new jobs queue behind it, so one
//                       host gets its activities in order (dlv:qseq:<host> numbers them;
//                       dlv:qseen:<host>:<n> shows a waiting job is still alive: one lost in a
//                       crash expires instead of holding the queue)
//   dlv:hosts           set of hosts that have state (listing, metrics, probes)
//   dlv:resume          set of hosts whose breaker was reset: their parked jobs go out again
// A host with no failures has no keys at all: the hot path for healthy hosts is one SMEMBERS per
// batch.
import type { Redis } from '../../db/redis.ts';
import { mgetAcrossSlots } from '../../db/redisSlots.ts';
import type { DeliverySettings } from './settings.ts';

export interface HostState {
  host: string;
  fails: number;
  since: number;
  until: number;
  level: number;
  tripped: number;
  backlog: number;
  error: string | null;
}

const hostKey = (host: string) => `dlv:host:${host}`;
const queueKey = (host: string) => `dlv:q:${host}`;
const queueSeqKey = (host: string) => `dlv:qseq:${host}`;
const seenKey = (host: string, seq: number) => `dlv:qseen:${host}:${seq}`;
const HOSTS = 'dlv:hosts';
const RESUME = 'dlv:resume';

function num(v: string | undefined | null): number {
  const n = Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
}

export async function failingHosts(redis: Redis): Promise<Set<string>> {
  return new Set(await redis.smembers(HOSTS));
}

export async function readHostState(redis: Redis, host: string): Promise<HostState> {
  const [h, backlog] = await Promise.all([redis.hgetall(hostKey(host)), redis.zcard(queueKey(host))]);
  return {
    host,
    fails: num(h.fails),
    since: num(h.since),
    until: num(h.until),
    level: num(h.level),
    tripped: num(h.tripped),
    backlog,
    error: h.error ?? null,
  };
}

/** The retry delay of a backoff level (1-based; the last delay repeats). */
export function delayOfLevel(settings: DeliverySettings, level: number): number {
  const d = settings.retryDelaysMs;
  return d[Math.min(Math.max(level, 1), d.length) - 1] ?? 0;
}

/** The level whose delay is at least `ms` (for Retry-After). */
export function levelForDelay(settings: DeliverySettings, ms: number): number {
  const d = settings.retryDelaysMs;
  for (let i = 0; i < d.length; i++) if (d[i] >= ms) return i + 1;
  return d.length;
}

// Atomic failure bookkeeping: several processes may fail on one host at once.
const RECORD_FAILURE = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local fails = redis.call('HINCRBY', key, 'fails', 1)
local since = tonumber(redis.call('HGET', key, 'since') or '0')
if since == 0 then since = now; redis.call('HSET', key, 'since', now) end
local level = tonumber(redis.call('HGET', key, 'level') or '0')
local minLevel = tonumber(ARGV[2])
local newLevel = math.max(level, math.min(fails, tonumber(ARGV[3])), minLevel)
redis.call('HSET', key, 'level', newLevel, 'error', ARGV[4])
local tripped = tonumber(redis.call('HGET', key, 'tripped') or '0')
if tripped == 0 and fails >= tonumber(ARGV[5]) and now - since >= tonumber(ARGV[6]) then
  tripped = now
  redis.call('HSET', key, 'tripped', now)
end
return {fails, since, newLevel, tripped}
`;

export interface FailureOutcome {
  fails: number;
  since: number;
  level: number;
  until: number;
  tripped: boolean;
}

/** Records a failed attempt; the host backs off to `until` (Retry-After, when given, is honoured). */
export async function recordHostFailure(
  redis: Redis,
  settings: DeliverySettings,
  host: string,
  errorClass: string,
  retryAfterMs: number | null,
): Promise<FailureOutcome> {
  const now = Date.now();
  const minLevel = retryAfterMs === null ? 0 : levelForDelay(settings, retryAfterMs);
  // The host joins HOSTS beside the script, in the same turn (no extra round trip): on a Redis
  // Cluster the set and the host's hash lie in different slots, which one script cannot touch.
  const [[fails, since, level, tripped]] = (await Promise.all([
    redis.eval(
      RECORD_FAILURE,
      1,
      hostKey(host),
      String(now),
      String(minLevel),
      String(settings.retryDelaysMs.length),
      errorClass,
      String(settings.breakerFailures),
      String(settings.breakerMinSpanMs),
    ),
    redis.sadd(HOSTS, host),
  ])) as [[number, number, number, number], number];
  const until = now + Math.max(delayOfLevel(settings, level), retryAfterMs ?? 0);
  await redis.hset(hostKey(host), 'until', String(until));
  return { fails, since, level, until, tripped: tripped > 0 };
}

/** A delivery to the host succeeded: its failure streak ends (the level stays while jobs wait). */
export async function recordHostSuccess(redis: Redis, host: string): Promise<void> {
  const backlog = await redis.zcard(queueKey(host));
  if (backlog > 0) {
    await redis.hset(hostKey(host), { fails: '0', since: '0', until: '0', tripped: '0' });
  } else {
    await redis.del(hostKey(host));
    await redis.srem(HOSTS, host);
  }
}

/** A new queue number of the host (order of waiting and parked jobs). */
export async function nextQueueNumber(redis: Redis, host: string): Promise<number> {
  return redis.incr(queueSeqKey(host));
}

/** A job starts waiting for the host (behind every job already waiting); returns its number. */
export async function enqueueWaiting(redis: Redis, host: string, aliveMs: number): Promise<number> {
  const seq = await nextQueueNumber(redis, host);
  await redis.zadd(queueKey(host), seq, String(seq));
  await redis.set(seenKey(host, seq), '1', 'PX', aliveMs);
  await redis.sadd(HOSTS, host);
  return seq;
}

/** A waiting job is done (sent, refused, parked or dropped). */
export async function leaveWaiting(redis: Redis, host: string, seq: number): Promise<void> {
  await redis.zrem(queueKey(host), String(seq));
  await redis.del(seenKey(host, seq));
}

/** A waiting job is still alive (it refreshes this at every hop). */
export async function touchWaiting(redis: Redis, host: string, seq: number, aliveMs: number): Promise<void> {
  await redis.set(seenKey(host, seq), '1', 'PX', aliveMs);
}

/**
 * Whether the waiting job `seq` is the host's oldest (only it may be tried). Keeps the job marked
 * alive; an older entry whose job was lost (its alive mark expired) is dropped from the queue.
 */
export async function isOldestWaiting(redis: Redis, host: string, seq: number, aliveMs: number): Promise<boolean> {
  await redis.set(seenKey(host, seq), '1', 'PX', aliveMs);
  for (let i = 0; i < 100; i++) {
    const [head] = await redis.zrange(queueKey(host), '0', '0');
    if (head === undefined) {
      // Not queued (e.g. replayed from a dead-letter or an older deployment): queue it now.
      await redis.zadd(queueKey(host), seq, String(seq));
      continue;
    }
    if (Number(head) === seq) return true;
    if (Number(head) > seq) {
      await redis.zadd(queueKey(host), seq, String(seq));
      continue;
    }
    if ((await redis.exists(seenKey(host, Number(head)))) === 0) {
      await redis.zrem(queueKey(host), head);
      continue;
    }
    return false;
  }
  return false;
}

/**
 * Closes a host's breaker (a probe got through, the host sent us a signed activity, or an admin
 * reset it). Its parked jobs go out again, in order, before anything newer: the host stays
 * "tripped" for new jobs (they are parked behind the old ones) until the housekeeping has sent
 * every parked job (`finishResume`). A host without an open breaker just loses its backoff.
 */
export async function resumeHost(redis: Redis, host: string): Promise<boolean> {
  const h = host.toLowerCase();
  const tripped = num(await redis.hget(hostKey(h), 'tripped'));
  if (tripped === 0) {
    const existed = (await redis.del(hostKey(h))) > 0;
    if ((await redis.zcard(queueKey(h))) === 0) await redis.srem(HOSTS, h);
    return existed;
  }
  await redis.hset(hostKey(h), { fails: '0', since: '0', until: '0', level: '0' });
  await redis.sadd(RESUME, h);
  return true;
}

/**
 * The host showed it is alive (a correctly signed inbox POST from it): if its breaker was open,
 * resume it. Cheap when the host has no state (one SISMEMBER), so the inbox may call it for every
 * request.
 */
export async function markHostAvailable(redis: Redis, host: string): Promise<boolean> {
  const h = host.toLowerCase();
  if ((await redis.sismember(HOSTS, h)) === 0) return false;
  if (num(await redis.hget(hostKey(h), 'tripped')) === 0) return false;
  return resumeHost(redis, h);
}

/** Hosts being resumed (their parked jobs go out again). */
export async function resumingHosts(redis: Redis): Promise<string[]> {
  return redis.smembers(RESUME);
}

export async function requestResume(redis: Redis, host: string): Promise<void> {
  await redis.sadd(RESUME, host);
}

/** Every parked job of the host was sent again: its breaker state goes away. */
export async function finishResume(redis: Redis, host: string): Promise<void> {
  await redis.del(hostKey(host));
  if ((await redis.zcard(queueKey(host))) === 0) await redis.srem(HOSTS, host);
  await redis.srem(RESUME, host);
}

/** One resuming process per host at a time. */
export async function claimResume(redis: Redis, host: string, ms: number): Promise<boolean> {
  return (await redis.set(`dlv:resuming:${host}`, '1', 'PX', ms, 'NX')) === 'OK';
}

export async function releaseResume(redis: Redis, host: string): Promise<void> {
  await redis.del(`dlv:resuming:${host}`);
}

export async function allHostStates(redis: Redis): Promise<HostState[]> {
  const hosts = [...(await failingHosts(redis))].sort();
  return Promise.all(hosts.map((h) => readHostState(redis, h)));
}

/** One probe per host and interval across all processes. */
export async function claimProbe(redis: Redis, host: string, intervalMs: number): Promise<boolean> {
  return (await redis.set(`dlv:probe:${host}`, '1', 'PX', Math.max(1, intervalMs), 'NX')) === 'OK';
}

// Once-only delivery of an activity to an inbox, recorded after the inbox accepted it.
const doneKey = (id: string) => `dlv:done:${id}`;

export async function alreadyDelivered(redis: Redis, ids: string[]): Promise<boolean[]> {
  if (ids.length === 0) return [];
  const values = await mgetAcrossSlots(redis, ids.map(doneKey));
  return values.map((v) => v !== null);
}

export async function markDelivered(redis: Redis, id: string, ttlMs: number): Promise<void> {
  await redis.set(doneKey(id), '1', 'PX', ttlMs);
}
