// The delivery worker: consumer group `<prefix>.delivery-worker` over the `delivery` topic (one
// DeliveryRequested job per activity and inbox, keyed by the inbox's host) and the delay topics.
//
// - Each job is one signed POST. A batch's jobs run concurrently across hosts (up to
//   `concurrency` in flight per process) and in order within one host.
// - A retryable failure (5xx, 408, 429, timeouts, connection and DNS errors) backs the host off
//   (hostState.ts) and sends the job to a delay topic `<prefix>.delivery.delay.<ms>` with the time
//   it is due; other jobs for that host follow it there while it backs off or while jobs wait, so
//   one host's activities keep their order. Each delay topic has one fixed delay, so every
//   partition is in due order; a partition is paused (not slept on) until its head is due, and a
//   job hops through its tier again until its own due time. After 16 retries a job is dropped.
// - 4xx other than 408/429 is final; a 410 from a follower's personal inbox ends that follow.
// - A host whose failures keep on (settings.breakerFailures over breakerMinSpanMs) has its breaker
//   opened: its jobs are parked in MongoDB (parked_deliveries), not tried and not dropped. One
//   probe per probeIntervalMs tries the oldest; when it gets through, or the host sends us a signed
//   activity (markHostAvailable), or an admin resets it, the parked jobs go out again in order.
// - Once-only: an accepted (or finally refused) activity/inbox pair is recorded in Redis, so a
//   job seen again after a crash or a re-planned event is not sent twice.
import { createHash } from 'node:crypto';
import { ObjectId } from 'mongodb';
import { Partitioners, type Admin, type EachBatchPayload, type KafkaMessage, type Message } from 'kafkajs';
import type { Core } from '../../services/core/context.ts';
import { mgetAcrossSlots } from '../../services/core/db/redisSlots.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { createKafka, topicName } from '../../services/core/events/kafka.ts';
import { ensureTopicsWith, whileTopicsSettle } from '../../services/core/events/topics.ts';
import { eventCodec } from '../../schemas/codec.ts';
import type { DeliveryRequested } from '../../schemas/index.ts';
import { parkedDeliveries } from '../../services/core/model/parkedDeliveries.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { endFollow } from '../../services/core/graph/unfollow.ts';
import { header, failedMessage, failuresSoFar, dueAt, originOf, H_ATTEMPT } from '../runtime/retry.ts';
import { Partitions } from '../runtime/partitions.ts';
import {
  allHostStates,
  alreadyDelivered,
  enqueueWaiting,
  isOldestWaiting,
  touchWaiting,
  leaveWaiting,
  nextQueueNumber,
  claimProbe,
  failingHosts,
  markDelivered,
  claimResume,
  finishResume,
  readHostState,
  recordHostFailure,
  recordHostSuccess,
  releaseResume,
  requestResume,
  resumeHost,
  resumingHosts,
  type HostState,
} from '../../services/core/activitypub/delivery/hostState.ts';
import {
  createDeliveryClient,
  type DeliveryClient,
  type DeliveryResult,
} from '../../services/core/activitypub/delivery/send.ts';
import { SignerCache, SignerMissingError } from '../../services/core/activitypub/delivery/signers.ts';
import type { DeliverySettings } from '../../services/core/activitypub/delivery/settings.ts';
import {
  deliveriesTotal,
  deliveryBreakersOpen,
  deliveryFailures,
  deliveryOldestAge,
  deliveryQueueDepth,
  deliverySeconds,
} from '../../services/core/activitypub/delivery/metrics.ts';

/** When a job in a delay topic may leave its current hop (ms). */
const H_HOP_DUE = 'delay-hop-due';
/** A parked job sent again after its host's breaker closed: not parked again for that. */
const H_RESUMED = 'delivery-resumed';
/** The job's number in its host's queue of waiting jobs. */
const H_QUEUE_SEQ = 'delivery-queue-seq';

export const DELIVERY_TOPIC = 'delivery';
export const delayTopicOf = (ms: number) => `delivery.delay.${ms}`;

export interface DeliveryWorkerOptions {
  settings: DeliverySettings;
  client?: DeliveryClient;
  sessionTimeout?: number;
  heartbeatInterval?: number;
  maxWaitTimeInMs?: number;
  /** How often parked hosts are resumed and probed (ms). */
  housekeepingMs?: number;
  /** How often the per-domain queue gauges are refreshed (ms). */
  gaugesMs?: number;
}

export interface DeliveryWorker {
  stop(): Promise<void>;
}

interface Item {
  message: KafkaMessage;
  job: DeliveryRequested;
  host: string;
  failures: number;
  due: number;
  /** The delay tier the job came from (null: the delivery topic). */
  tier: number | null;
  /** Sent again from the parked jobs of a resumed host. */
  resumed: boolean;
  /** Its number in the host's queue of waiting jobs (null: not waiting). */
  seq: number | null;
  doneId: string;
  done: boolean;
  /** pending → working → (attempting →) finished; see the batch deadline in eachBatch. */
  phase: 'pending' | 'working' | 'attempting' | 'finished';
  /** Another run of a delivery that may still be in flight from an abandoned batch. */
  inFlight: boolean;
}

/**
 * Creates (or grows) the delivery topics. Processes starting together may race to grow the same
 * topic; the loser's "invalid number of partitions" only means the winner already did it.
 */
export async function ensureDeliveryTopics(admin: Admin, topics: string[], partitions: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await ensureTopicsWith(admin, topics, partitions);
      // A consumer that subscribes before the broker's metadata shows the new partitions is
      // assigned only the old ones until its metadata expires: wait until they are visible. On
      // several brokers, one may not know a topic another has just created: ask again then.
      for (let i = 0; i < 50; i++) {
        const meta = await whileTopicsSettle(() => admin.fetchTopicMetadata({ topics }));
        if (meta.topics.every((t) => t.partitions.length >= partitions)) return;
        await new Promise((r) => setTimeout(r, 200));
      }
      return;
    } catch (err) {
      if ((err as { type?: string }).type !== 'INVALID_PARTITIONS' || attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 300 * attempt));
    }
  }
}

const inFlightKey = (doneId: string) => `dlv:inflight:${doneId}`;

/** Once-only id of an activity at an inbox. */
export function deliveryDoneId(activityId: string, inbox: string): string {
  return createHash('sha1').update(`${activityId} ${inbox}`).digest('hex');
}

function hostOfInbox(inbox: string): string {
  try {
    return new URL(inbox).host.toLowerCase();
  } catch {
    return '';
  }
}

/** A counting semaphore: at most `max` POSTs in flight per process. */
class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

export async function runDeliveryWorker(core: Core, opts: DeliveryWorkerOptions): Promise<DeliveryWorker> {
  const { config } = core;
  const { settings } = opts;
  const logger = core.logger.child({ pipeline: 'delivery-worker' });
  const mainTopic = topicName(config, DELIVERY_TOPIC);
  const tierTopics = new Map(settings.delayTiersMs.map((ms) => [ms, topicName(config, delayTopicOf(ms))]));
  const tierOfTopic = new Map([...tierTopics].map(([ms, t]) => [t, ms]));
  // Every waiting job of a host goes through one topic (the shortest tier), so the host's jobs
  // stay in one FIFO queue: they come back, are parked or sent in the order they were queued.
  const queueTier = settings.delayTiersMs[0];
  const deadLetterTopic = topicName(config, 'delivery-worker.dlq');
  const codec = eventCodec();
  const client = opts.client ?? createDeliveryClient(config, settings);
  const signers = new SignerCache(core);
  const limiter = new Limiter(settings.concurrency);
  const paused = new Partitions();
  const doneTtlMs = settings.maxAgeMs + 24 * 3600_000;
  // A waiting job refreshes its alive mark at every hop; one missing this long was lost.
  const aliveMs = queueTier * 6 + 60_000;

  const kafka = createKafka(config, logger, 'fedisrv-delivery-worker');
  const admin = kafka.admin();
  await admin.connect();
  await ensureDeliveryTopics(admin, [mainTopic, ...tierTopics.values(), deadLetterTopic], settings.partitions);
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  const consumer = kafka.consumer({
    groupId: `${config.kafkaTopicPrefix}.delivery-worker`,
    allowAutoTopicCreation: false,
    sessionTimeout: opts.sessionTimeout ?? 60_000,
    heartbeatInterval: opts.heartbeatInterval ?? 3_000,
    maxWaitTimeInMs: opts.maxWaitTimeInMs ?? 500,
    maxBytesPerPartition: 4 * 1024 * 1024,
  });
  consumer.on(consumer.events.CRASH, ({ payload }) =>
    logger.error({ err: payload.error, restart: payload.restart }, 'delivery consumer crashed'),
  );

  const count = (outcome: string, activity: string) => deliveriesTotal.inc({ outcome, activity });

  /** The message that puts a job (back) into a delay tier, due at `due`. */
  function delayed(
    item: Item,
    tier: number,
    due: number,
    failures: number,
    reason: string,
  ): { topic: string; message: Message } {
    const origin = originOf(item.message, { topic: mainTopic, partition: 0, offset: item.message.offset });
    const message = failedMessage(item.message, origin, failures, new Error(reason), due);
    message.key = item.host;
    (message.headers ??= {})[H_HOP_DUE] = String(Date.now() + tier);
    if (item.seq !== null) message.headers[H_QUEUE_SEQ] = String(item.seq);
    else delete message.headers[H_QUEUE_SEQ];
    return { topic: tierTopics.get(tier)!, message };
  }

  async function park(item: Item, failures: number): Promise<void> {
    await collection(core.db, parkedDeliveries).insertOne({
      _id: new ObjectId(),
      host: item.host,
      // Waiting jobs keep their place; others come after every job numbered so far.
      seq: item.seq ?? (await nextQueueNumber(core.redis, item.host)),
      job: (item.message.value ?? Buffer.alloc(0)).toString('base64'),
      key: item.host,
      failures,
      createdAt: item.job.createdAt,
      parkedAt: new Date(),
    });
    count('parked', item.job.activityType);
  }

  async function attempt(item: Item): Promise<DeliveryResult | null> {
    let key;
    try {
      key = await signers.keyFor(item.job.signerAccountId);
    } catch (err) {
      if (err instanceof SignerMissingError) {
        logger.warn({ activity: item.job.activityId, err }, 'delivery dropped: its signer is gone');
        count('dropped', item.job.activityType);
        return null;
      }
      throw err;
    }
    const stop = deliverySeconds.startTimer();
    const result = await limiter.run(() => client.deliver(item.job.inbox, item.job.body, key));
    stop();
    return result;
  }

  /** A 410 from a follower's personal inbox: that account is gone, so its follow of the signer ends. */
  async function followerGone(job: DeliveryRequested): Promise<void> {
    if (!job.recipientAccountId || !job.signerAccountId) return;
    const follower = await collection(core.db, accounts).findOne(
      { _id: BigInt(job.recipientAccountId), domain: { $ne: null } },
      { projection: { _id: 1, domain: 1 } },
    );
    if (!follower) return;
    const followed = { _id: BigInt(job.signerAccountId), domain: null };
    await endFollow(core, follower, followed, 'UNFOLLOW', follower);
  }

  /** Runs one host's jobs of a batch in order; `out` collects what goes to delay topics. */
  async function runHost(
    host: string,
    items: Item[],
    initial: HostState | null,
    out: Array<{ topic: string; message: Message }>,
    batch: { abandoned: boolean },
  ): Promise<void> {
    let state = initial;
    for (const item of items) {
      if (batch.abandoned) return; // the rest went to a delay topic with the batch
      item.phase = 'working';
      await runItem(item);
      item.phase = 'finished';
    }

    /** Puts the job in (or keeps it in) the host's queue of waiting jobs, due at `due`. */
    async function wait(item: Item, due: number, failures: number, reason: string): Promise<void> {
      if (item.seq === null) {
        item.seq = await enqueueWaiting(core.redis, host, aliveMs);
        if (state) state.backlog++;
        else state = { host, fails: 0, since: 0, until: 0, level: 0, tripped: 0, backlog: 1, error: null };
      }
      out.push(delayed(item, queueTier, due, failures, reason));
    }

    /** The job is done with (sent, refused, parked, dropped): it leaves the host's queue. */
    async function leave(item: Item): Promise<void> {
      if (item.seq === null) return;
      await leaveWaiting(core.redis, host, item.seq);
      if (state) state.backlog = Math.max(0, state.backlog - 1);
    }

    async function runItem(item: Item): Promise<void> {
      const type = item.job.activityType;
      if (item.seq !== null) {
        // A waiting job goes on only when due and the oldest of its host's queue.
        const due = item.due <= Date.now() + 20 && !item.inFlight;
        if (!due) await touchWaiting(core.redis, host, item.seq, aliveMs);
        if (!due || !(await isOldestWaiting(core.redis, host, item.seq, aliveMs))) {
          out.push(delayed(item, queueTier, item.due, item.failures, 'waiting'));
          return;
        }
      }
      if (item.done) {
        count('duplicate', type);
        return leave(item);
      }
      if (Date.now() - item.job.createdAt.getTime() > settings.maxAgeMs || host === '') {
        count('dropped', type);
        return leave(item);
      }
      if (state && state.tripped > 0 && !item.resumed) {
        await park(item, item.failures);
        return leave(item);
      }
      if (state && (state.until > Date.now() || (item.seq === null && state.backlog > 0))) {
        // The host backs off, or older jobs of it wait: queue behind them.
        await wait(item, Math.max(state.until, Date.now()), item.failures, 'queued');
        count('deferred', type);
        return;
      }
      item.phase = 'attempting';
      const result = await attempt(item);
      if (result === null) return leave(item);
      if (batch.abandoned && item.inFlight) {
        // The batch went on without this attempt (a copy waits in a delay topic): only record it.
        if (result.kind === 'failed') {
          deliveryFailures.inc({ class: result.class });
          await recordHostFailure(core.redis, settings, host, result.class, result.retryAfterMs);
        } else {
          await markDelivered(core.redis, item.doneId, doneTtlMs);
          count(result.kind, type);
          await recordHostSuccess(core.redis, host);
        }
        await core.redis.del(inFlightKey(item.doneId));
        return;
      }
      if (result.kind === 'delivered' || result.kind === 'rejected') {
        await markDelivered(core.redis, item.doneId, doneTtlMs);
        await leave(item);
        if (result.kind === 'rejected') {
          deliveryFailures.inc({ class: result.class });
          count('rejected', type);
          if (result.gone) await followerGone(item.job);
        } else count('delivered', type);
        if (state && (result.kind === 'delivered' || result.class !== 'refused_address')) {
          await recordHostSuccess(core.redis, host);
          state = state.backlog > 0 ? { ...state, fails: 0, since: 0, until: 0, tripped: 0 } : null;
        }
        return;
      }
      deliveryFailures.inc({ class: result.class });
      const failures = item.failures + 1;
      const outcome = await recordHostFailure(core.redis, settings, host, result.class, result.retryAfterMs);
      state = {
        ...(state ?? { host, backlog: 0, error: null }),
        fails: outcome.fails,
        since: outcome.since,
        level: outcome.level,
        until: outcome.until,
        tripped: outcome.tripped ? Date.now() : 0,
        error: result.class,
      };
      if (failures > settings.retryDelaysMs.length) {
        logger.info({ activity: item.job.activityId, inbox: item.job.inbox, failures }, 'delivery given up');
        count('gave_up', type);
        await leave(item);
      } else if (outcome.tripped) {
        logger.warn({ host, fails: outcome.fails }, 'delivery circuit breaker opened; parking jobs');
        await park(item, failures);
        await leave(item);
      } else {
        // It stays the oldest of its host's queue (or becomes the first in it).
        await wait(item, outcome.until, failures, result.class);
        count('failed', type);
      }
    }
  }

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, pause, isStale } = payload;
    const tier = tierOfTopic.get(batch.topic) ?? null;
    const items: Item[] = [];
    const deadLetters: Message[] = [];
    let last: string | null = null;
    for (const message of batch.messages) {
      if (isStale()) break;
      if (tier !== null) {
        const hopDue = Number(header(message.headers, H_HOP_DUE) ?? '0');
        if (hopDue > Date.now()) {
          paused.pauseUntil(batch.topic, batch.partition, hopDue, pause);
          break;
        }
      }
      try {
        const decoded = codec.decode(message.value ?? Buffer.alloc(0));
        if (decoded.type !== 'DeliveryRequested') throw new Error(`unexpected ${decoded.type} on the delivery topic`);
        const job = decoded.record as DeliveryRequested;
        items.push({
          message,
          job,
          host: hostOfInbox(job.inbox),
          failures: failuresSoFar(message),
          due: dueAt(message),
          tier,
          resumed: header(message.headers, H_RESUMED) === '1',
          seq:
            tier !== null && header(message.headers, H_QUEUE_SEQ) ? Number(header(message.headers, H_QUEUE_SEQ)) : null,
          doneId: deliveryDoneId(job.activityId, job.inbox),
          done: false,
          phase: 'pending',
          inFlight: false,
        });
      } catch (err) {
        logger.warn({ err, topic: batch.topic, offset: message.offset }, 'undecodable delivery job dead-lettered');
        deadLetters.push(
          failedMessage(
            message,
            { topic: batch.topic, partition: batch.partition, offset: message.offset },
            1,
            err,
            null,
          ),
        );
      }
      last = message.offset;
    }

    if (items.length > 0) {
      const done = await alreadyDelivered(
        core.redis,
        items.map((i) => i.doneId),
      );
      items.forEach((item, i) => (item.done = done[i]));
      const fromDelay = items.filter((i) => i.tier !== null && !i.done);
      if (fromDelay.length > 0) {
        const flying = await mgetAcrossSlots(
          core.redis,
          fromDelay.map((i) => inFlightKey(i.doneId)),
        );
        fromDelay.forEach((item, i) => (item.inFlight = flying[i] !== null));
      }
      const failing = await failingHosts(core.redis);
      const byHost = new Map<string, Item[]>();
      for (const item of items) byHost.set(item.host, [...(byHost.get(item.host) ?? []), item]);
      const out: Array<{ topic: string; message: Message }> = [];
      const progress = { abandoned: false };
      let beat = Date.now();
      const all = Promise.all(
        [...byHost].map(async ([host, hostItems]) => {
          const state = failing.has(host) ? await readHostState(core.redis, host) : null;
          await runHost(host, hostItems, state, out, progress);
          if (Date.now() - beat > 1_000) {
            beat = Date.now();
            await heartbeat().catch(() => undefined);
          }
        }),
      );
      // A slow or silent server must not hold the batch (kafkajs fetches again only when every
      // batch of a fetch is done, so it would hold every partition): past the deadline, what is
      // not finished goes to the shortest delay tier, in order, and the batch is committed. An
      // attempt still under way is marked in flight, so its copy waits until it has ended.
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((r) => {
        if (settings.batchDeadlineMs > 0) timer = setTimeout(() => r('late'), settings.batchDeadlineMs);
      });
      const finished = await Promise.race([all.then(() => 'done' as const), deadline]);
      clearTimeout(timer);
      if (finished === 'late') {
        progress.abandoned = true;
        // A host that has not answered within the deadline backs off as if it had failed.
        const slow = new Set(items.filter((i) => i.phase === 'attempting').map((i) => i.host));
        for (const host of slow) await recordHostFailure(core.redis, settings, host, 'slow', null);
        for (const item of items) {
          if (item.phase === 'finished') continue;
          if (item.phase === 'attempting') {
            item.inFlight = true;
            await core.redis.set(inFlightKey(item.doneId), '1', 'PX', settings.totalTimeoutMs + 5_000);
          }
          if (item.seq === null) item.seq = await enqueueWaiting(core.redis, item.host, aliveMs);
          out.push(delayed(item, queueTier, Date.now(), item.failures, 'batch deadline'));
          count('deferred', item.job.activityType);
        }
        all.catch((err: unknown) => logger.warn({ err }, 'delivery finished after its batch deadline failed'));
      }
      const byTopic = new Map<string, Message[]>();
      for (const o of out.splice(0)) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o.message]);
      if (deadLetters.length > 0) byTopic.set(deadLetterTopic, deadLetters);
      if (byTopic.size > 0)
        await producer.sendBatch({
          acks: -1,
          topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        });
    } else if (deadLetters.length > 0) {
      await producer.send({ topic: deadLetterTopic, acks: -1, messages: deadLetters });
    }
    if (last !== null) resolveOffset(last);
    await heartbeat();
  }

  // Parked jobs of a host that is back go out again, oldest first, with fresh attempts; new jobs
  // for it are parked behind them until none is left, so the host gets them in order.
  async function resumeParked(host: string): Promise<void> {
    if (!(await claimResume(core.redis, host, 60_000))) return;
    const parked = collection(core.db, parkedDeliveries);
    try {
      for (let round = 0; round < 100; round++) {
        const docs = await parked.find({ host }).sort({ seq: 1, _id: 1 }).limit(500).toArray();
        if (docs.length === 0) {
          await finishResume(core.redis, host);
          // A job parked between the last read and the state going away is sent on the next tick.
          if ((await parked.countDocuments({ host })) > 0) await requestResume(core.redis, host);
          return;
        }
        await producer.send({
          topic: mainTopic,
          acks: -1,
          messages: docs.map((d) => ({
            key: d.key,
            value: Buffer.from(d.job, 'base64'),
            headers: { [H_ATTEMPT]: '0', [H_RESUMED]: '1' },
          })),
        });
        await parked.deleteMany({ _id: { $in: docs.map((d) => d._id) } });
        logger.info({ host, jobs: docs.length }, 'parked deliveries resumed');
      }
    } finally {
      await releaseResume(core.redis, host);
    }
  }

  // One probe: the oldest parked job of a host whose breaker is open.
  async function probe(host: string): Promise<void> {
    const doc = await collection(core.db, parkedDeliveries).findOne({ host }, { sort: { seq: 1, _id: 1 } });
    if (!doc) {
      await resumeHost(core.redis, host);
      return;
    }
    const value = Buffer.from(doc.job, 'base64');
    const job = codec.decode(value).record as DeliveryRequested;
    const item: Item = {
      message: { key: Buffer.from(host), value, headers: {}, offset: '0', timestamp: '0', attributes: 0 },
      job,
      host,
      failures: doc.failures,
      due: 0,
      tier: null,
      resumed: true,
      seq: null,
      doneId: deliveryDoneId(job.activityId, job.inbox),
      done: false,
      phase: 'pending',
      inFlight: false,
    };
    const result = await attempt(item);
    if (result === null || result.kind !== 'failed') {
      if (result) await markDelivered(core.redis, item.doneId, doneTtlMs);
      await collection(core.db, parkedDeliveries).deleteOne({ _id: doc._id });
      if (result?.kind === 'delivered') count('delivered', job.activityType);
      logger.info({ host }, 'delivery probe got through; resuming the host');
      await resumeHost(core.redis, host);
    } else {
      deliveryFailures.inc({ class: result.class });
      await recordHostFailure(core.redis, settings, host, result.class, result.retryAfterMs);
    }
  }

  let gaugesAt = 0;
  async function housekeeping(): Promise<void> {
    const states = await allHostStates(core.redis);
    await refreshGauges(states).catch((err: unknown) => logger.warn({ err }, 'delivery gauges not refreshed'));
    // Parked jobs of a host whose breaker is closed (an interrupted resume) are sent too.
    const parkedHosts = (await collection(core.db, parkedDeliveries).distinct('host')) as string[];
    const open = new Set(states.filter((s) => s.tripped > 0).map((s) => s.host));
    for (const host of parkedHosts) if (!open.has(host)) await requestResume(core.redis, host);
    for (const host of await resumingHosts(core.redis)) await resumeParked(host);
    const resuming = new Set(await resumingHosts(core.redis));
    let openCount = 0;
    for (const s of states) {
      if (s.tripped === 0 || resuming.has(s.host)) continue;
      openCount++;
      if (await claimProbe(core.redis, s.host, settings.probeIntervalMs))
        await probe(s.host).catch((err: unknown) => logger.warn({ err, host: s.host }, 'delivery probe failed'));
    }
    deliveryBreakersOpen.set(openCount);
  }

  // Queue depth (waiting + parked) and the oldest undelivered job per failing host, one query.
  async function refreshGauges(states: HostState[]): Promise<void> {
    if (Date.now() - gaugesAt < (opts.gaugesMs ?? 15_000)) return;
    gaugesAt = Date.now();
    const parked = new Map<string, { n: number; oldest: Date }>();
    const groups = collection(core.db, parkedDeliveries).aggregate<{ _id: string; n: number; oldest: Date }>([
      { $group: { _id: '$host', n: { $sum: 1 }, oldest: { $min: '$createdAt' } } },
    ]);
    for await (const g of groups) parked.set(g._id, { n: g.n, oldest: g.oldest });
    deliveryQueueDepth.reset();
    deliveryOldestAge.reset();
    deliveryBreakersOpen.set(states.filter((s) => s.tripped > 0).length);
    for (const s of states) {
      const p = parked.get(s.host);
      deliveryQueueDepth.set({ domain: s.host }, s.backlog + (p?.n ?? 0));
      const since = Math.min(s.since > 0 ? s.since : Infinity, p ? new Date(p.oldest).getTime() : Infinity);
      if (Number.isFinite(since)) deliveryOldestAge.set({ domain: s.host }, (Date.now() - since) / 1000);
    }
  }

  let housekeepingRun: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (housekeepingRun) return;
    housekeepingRun = housekeeping()
      .catch((err: unknown) => logger.warn({ err }, 'delivery housekeeping failed'))
      .finally(() => (housekeepingRun = null));
  }, opts.housekeepingMs ?? 2_000);
  timer.unref();

  await consumer.connect();
  await consumer.subscribe({ topics: [mainTopic, ...tierTopics.values()], fromBeginning: true });
  const joined = new Promise<void>((resolve) => {
    const off = consumer.on(consumer.events.GROUP_JOIN, () => {
      off();
      resolve();
    });
  });
  await consumer.run({
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: settings.partitions,
    eachBatch,
  });
  let joinTimer: NodeJS.Timeout | undefined;
  await Promise.race([joined, new Promise((r) => (joinTimer = setTimeout(r, 60_000)))]);
  clearTimeout(joinTimer);

  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(timer);
        paused.clear();
        await client.close();
        await housekeepingRun;
        await consumer.disconnect();
        await producer.disconnect();
        await admin.disconnect();
      })();
      return stopped;
    },
  };
}
