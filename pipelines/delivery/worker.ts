// The delivery worker: consumer group `<prefix>.delivery-worker` over the `delivery` topic (one
// DeliveryRequested job per activity and inbox, keyed by the inbox's host) and the delay topics,
// on the consumer runtime (../runtime/consumer.ts) with the delay-tier strategy:
//
// - Each job is one signed POST (attempt.ts). A batch's jobs run concurrently across hosts (up to
//   `concurrency` in flight per process) and in order within one host.
// - A retryable failure (5xx, 408, 429, timeouts, connection and DNS errors) backs the host off
//   (hostState.ts) and sends the job to a delay topic `<prefix>.delivery.delay.<ms>` with the time
//   it is due; other jobs for that host follow it there while it backs off or while jobs wait, so
//   one host's activities keep their order (hostQueue.ts). Each delay topic has one fixed delay,
//   so every partition is in due order; the runtime holds a partition until its head's hop is
//   due, and a job hops through its tier again until its own due time. After 16 retries a job is
//   dropped (deliveryRetryPolicy).
// - 4xx other than 408/429 is final; a 410 from a follower's personal inbox ends that follow
//   (followerGone.ts).
// - A host whose failures keep on has its breaker opened: its jobs are parked (breaker.ts).
// - Once-only: an accepted (or finally refused) activity/inbox pair is recorded in Redis, so a
//   job seen again after a crash or a re-planned event is not sent twice.
// - An undecodable message goes to `<prefix>.delivery-worker.dlq` (the runtime's `<name>.dlq`).
import type { KafkaMessage, Message } from 'kafkajs';
import type { Core } from '../../services/core/context.ts';
import { mgetAcrossSlots } from '../../services/core/db/redisSlots.ts';
import { topicName } from '../../services/core/events/kafka.ts';
import { eventCodec } from '../../schemas/codec.ts';
import type { DeliveryRequested } from '../../schemas/index.ts';
import { failedMessage, header } from '../runtime/retry.ts';
import { startConsumer, type DueBatch, type Outgoing } from '../runtime/consumer.ts';
import {
  alreadyDelivered,
  enqueueWaiting,
  isOldestWaiting,
  touchWaiting,
  leaveWaiting,
  failingHosts,
  markDelivered,
  readHostState,
  recordHostFailure,
  recordHostSuccess,
  type HostState,
} from '../../services/core/activitypub/delivery/hostState.ts';
import { createDeliveryClient, type DeliveryClient } from '../../services/core/activitypub/delivery/send.ts';
import type { DeliverySettings } from '../../services/core/activitypub/delivery/settings.ts';
import { deliveriesTotal, deliveryFailures } from '../../services/core/activitypub/delivery/metrics.ts';
import { attemptWith } from './attempt.ts';
import { breakerFor } from './breaker.ts';
import { followerGone } from './followerGone.ts';
import {
  afterFailure,
  deliveryRetryPolicy,
  stateAfterFailure,
  stateAfterSuccess,
  stateWithWaiting,
  stepFor,
  waitingJobDue,
} from './hostQueue.ts';
import { DELIVERY_TOPIC, delayedMessage, delayTopicOf, H_HOP_DUE, itemOf, type Item } from './job.ts';

export { DELIVERY_TOPIC, delayTopicOf, deliveryDoneId } from './job.ts';

/** The worker's consumer group and, with `.dlq`, its dead-letter topic (unchanged names). */
export const DELIVERY_WORKER = 'delivery-worker';

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

type Out = Array<{ topic: string; message: Message }>;

const inFlightKey = (doneId: string) => `dlv:inflight:${doneId}`;

export async function runDeliveryWorker(core: Core, opts: DeliveryWorkerOptions): Promise<DeliveryWorker> {
  const { config } = core;
  const { settings } = opts;
  const logger = core.logger.child({ pipeline: DELIVERY_WORKER });
  const mainTopic = topicName(config, DELIVERY_TOPIC);
  const tierTopics = new Map(settings.delayTiersMs.map((ms) => [ms, topicName(config, delayTopicOf(ms))]));
  const tierOfTopic = new Map([...tierTopics].map(([ms, t]) => [t, ms]));
  // Every waiting job of a host goes through one topic (the shortest tier), so the host's jobs
  // stay in one FIFO queue: they come back, are parked or sent in the order they were queued.
  const queueTier = settings.delayTiersMs[0];
  const deadLetterTopic = topicName(config, `${DELIVERY_WORKER}.dlq`);
  const codec = eventCodec();
  const client = opts.client ?? createDeliveryClient(config, settings);
  const retryPolicy = deliveryRetryPolicy(settings);
  const doneTtlMs = settings.maxAgeMs + 24 * 3600_000;
  // A waiting job refreshes its alive mark at every hop; one missing this long was lost.
  const aliveMs = queueTier * 6 + 60_000;
  const attempt = attemptWith(core, client, settings.concurrency, logger);
  // Set once the consumer has started (housekeeping starts after that).
  let send: (out: readonly Outgoing[]) => Promise<void> = async () => {
    throw new Error('delivery worker not started');
  };
  const breaker = breakerFor({
    core,
    settings,
    logger,
    attempt,
    mainTopic,
    send: (out) => send(out),
    doneTtlMs,
    gaugesMs: opts.gaugesMs,
  });

  const count = (outcome: string, activity: string) => deliveriesTotal.inc({ outcome, activity });
  const delayed = (item: Item, due: number, failures: number, reason: string) => ({
    topic: tierTopics.get(queueTier)!,
    message: delayedMessage(item, mainTopic, queueTier, due, failures, reason),
  });

  /** Runs one host's jobs of a batch in order; `out` collects what goes to delay topics. */
  async function runHost(
    host: string,
    items: Item[],
    initial: HostState | null,
    out: Out,
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
        state = stateWithWaiting(state, host);
      }
      out.push(delayed(item, due, failures, reason));
    }

    /** The job is done with (sent, refused, parked, dropped): it leaves the host's queue. */
    async function leave(item: Item): Promise<void> {
      if (item.seq === null) return;
      await leaveWaiting(core.redis, host, item.seq);
      if (state) state = { ...state, backlog: Math.max(0, state.backlog - 1) };
    }

    async function runItem(item: Item): Promise<void> {
      const type = item.job.activityType;
      if (item.seq !== null) {
        // A waiting job goes on only when due and the oldest of its host's queue.
        const due = waitingJobDue(item, Date.now());
        if (!due) await touchWaiting(core.redis, host, item.seq, aliveMs);
        if (!due || !(await isOldestWaiting(core.redis, host, item.seq, aliveMs))) {
          out.push(delayed(item, item.due, item.failures, 'waiting'));
          return;
        }
      }
      switch (stepFor(item, state, Date.now(), settings.maxAgeMs)) {
        case 'duplicate':
          count('duplicate', type);
          return leave(item);
        case 'drop':
          count('dropped', type);
          return leave(item);
        case 'park':
          await breaker.park(item, item.failures);
          return leave(item);
        case 'queue':
          await wait(item, Math.max(state!.until, Date.now()), item.failures, 'queued');
          count('deferred', type);
          return;
        case 'attempt':
          break;
      }
      item.phase = 'attempting';
      const result = await attempt(item.job);
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
          if (result.gone) await followerGone(core, item.job);
        } else count('delivered', type);
        if (state && (result.kind === 'delivered' || result.class !== 'refused_address')) {
          await recordHostSuccess(core.redis, host);
          state = stateAfterSuccess(state);
        }
        return;
      }
      deliveryFailures.inc({ class: result.class });
      const failures = item.failures + 1;
      const outcome = await recordHostFailure(core.redis, settings, host, result.class, result.retryAfterMs);
      state = stateAfterFailure(state, host, outcome, result.class, Date.now());
      switch (afterFailure(retryPolicy, failures, outcome.tripped)) {
        case 'give_up':
          logger.info({ activity: item.job.activityId, inbox: item.job.inbox, failures }, 'delivery given up');
          count('gave_up', type);
          await leave(item);
          return;
        case 'park':
          logger.warn({ host, fails: outcome.fails }, 'delivery circuit breaker opened; parking jobs');
          await breaker.park(item, failures);
          await leave(item);
          return;
        case 'wait':
          // It stays the oldest of its host's queue (or becomes the first in it).
          await wait(item, outcome.until, failures, result.class);
          count('failed', type);
      }
    }
  }

  /** Runs the batch's jobs, host by host; past the deadline the rest is deferred (see below). */
  async function runItems(items: Item[], heartbeat: () => Promise<void>): Promise<Out> {
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
    const out: Out = [];
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
        out.push(delayed(item, Date.now(), item.failures, 'batch deadline'));
        count('deferred', item.job.activityType);
      }
      all.catch((err: unknown) => logger.warn({ err }, 'delivery finished after its batch deadline failed'));
    }
    return out.splice(0);
  }

  async function eachBatch(batch: DueBatch): Promise<Outgoing[]> {
    const tier = tierOfTopic.get(batch.topic) ?? null;
    const items: Item[] = [];
    const deadLetters: Message[] = [];
    for (const message of batch.messages) {
      try {
        const decoded = codec.decode(message.value ?? Buffer.alloc(0));
        if (decoded.type !== 'DeliveryRequested') throw new Error(`unexpected ${decoded.type} on the delivery topic`);
        items.push(itemOf(message, decoded.record as DeliveryRequested, tier));
      } catch (err) {
        logger.warn({ err, topic: batch.topic, offset: message.offset }, 'undecodable delivery job dead-lettered');
        const origin = { topic: batch.topic, partition: batch.partition, offset: message.offset };
        deadLetters.push(failedMessage(message, origin, 1, err, null));
      }
    }
    const byTopic = new Map<string, Message[]>();
    if (items.length > 0)
      for (const o of await runItems(items, batch.heartbeat))
        byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o.message]);
    return [
      ...[...byTopic].map(([topic, messages]) => ({ topic, messages, eventType: 'DeliveryRequested' })),
      { topic: deadLetterTopic, messages: deadLetters, eventType: 'failed' },
    ];
  }

  const hopDue = (message: KafkaMessage) => Number(header(message.headers, H_HOP_DUE) ?? '0');
  const consumer = await startConsumer({
    core,
    name: DELIVERY_WORKER,
    logger,
    topics: [mainTopic, ...tierTopics.values()],
    held: new Map([...tierTopics.values()].map((t) => [t, hopDue])),
    partitions: settings.partitions,
    sessionTimeout: opts.sessionTimeout ?? 60_000,
    heartbeatInterval: opts.heartbeatInterval,
    maxWaitTimeInMs: opts.maxWaitTimeInMs,
    maxBytesPerPartition: 4 * 1024 * 1024,
    partitionsConsumedConcurrently: settings.partitions,
    eachBatch,
  });
  send = (out) => consumer.send(out);

  let housekeepingRun: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (housekeepingRun) return;
    housekeepingRun = breaker
      .housekeeping()
      .catch((err: unknown) => logger.warn({ err }, 'delivery housekeeping failed'))
      .finally(() => (housekeepingRun = null));
  }, opts.housekeepingMs ?? 2_000);
  timer.unref();

  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(timer);
        await client.close();
        await housekeepingRun;
        await consumer.stop();
      })();
      return stopped;
    },
  };
}
