// The circuit breaker's side: a host whose failures keep on (settings.breakerFailures over
// breakerMinSpanMs) has its breaker opened (hostState.ts) and its jobs parked in MongoDB
// (parked_deliveries), neither tried nor dropped. Housekeeping, every few seconds: one probe per
// probeIntervalMs tries a parked host's oldest job; when it gets through, or the host sends us a
// signed activity (markHostAvailable), or an admin resets it, the parked jobs go out again in
// order. It also refreshes the per-host queue gauges.
import { ObjectId } from 'mongodb';
import type { Core } from '../../services/core/context.ts';
import type { Logger } from '../../services/core/logger.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { parkedDeliveries } from '../../services/core/model/parkedDeliveries.ts';
import { eventCodec } from '../../schemas/codec.ts';
import type { DeliveryRequested } from '../../schemas/index.ts';
import {
  allHostStates,
  claimProbe,
  claimResume,
  finishResume,
  markDelivered,
  nextQueueNumber,
  recordHostFailure,
  releaseResume,
  requestResume,
  resumeHost,
  resumingHosts,
  type HostState,
} from '../../services/core/activitypub/delivery/hostState.ts';
import type { DeliverySettings } from '../../services/core/activitypub/delivery/settings.ts';
import {
  deliveriesTotal,
  deliveryBreakersOpen,
  deliveryFailures,
  deliveryOldestAge,
  deliveryQueueDepth,
} from '../../services/core/activitypub/delivery/metrics.ts';
import { H_ATTEMPT } from '../runtime/retry.ts';
import type { Outgoing } from '../runtime/consumer.ts';
import type { Attempt } from './attempt.ts';
import { deliveryDoneId, H_RESUMED, type Item } from './job.ts';

export interface BreakerOptions {
  core: Core;
  settings: DeliverySettings;
  logger: Logger;
  attempt: Attempt;
  /** Full name of the delivery topic, where resumed jobs go. */
  mainTopic: string;
  send(out: readonly Outgoing[]): Promise<void>;
  doneTtlMs: number;
  /** How often the per-domain queue gauges are refreshed (ms). */
  gaugesMs?: number;
}

export interface Breaker {
  /** Parks a job of a host whose breaker is open. */
  park(item: Item, failures: number): Promise<void>;
  housekeeping(): Promise<void>;
}

export function breakerFor(opts: BreakerOptions): Breaker {
  const { core, settings, logger, attempt, doneTtlMs } = opts;
  const codec = eventCodec();
  const parked = () => collection(core.db, parkedDeliveries);

  async function park(item: Item, failures: number): Promise<void> {
    await parked().insertOne({
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
    deliveriesTotal.inc({ outcome: 'parked', activity: item.job.activityType });
  }

  // Parked jobs of a host that is back go out again, oldest first, with fresh attempts; new jobs
  // for it are parked behind them until none is left, so the host gets them in order.
  async function resumeParked(host: string): Promise<void> {
    if (!(await claimResume(core.redis, host, 60_000))) return;
    try {
      for (let round = 0; round < 100; round++) {
        const docs = await parked().find({ host }).sort({ seq: 1, _id: 1 }).limit(500).toArray();
        if (docs.length === 0) {
          await finishResume(core.redis, host);
          // A job parked between the last read and the state going away is sent on the next tick.
          if ((await parked().countDocuments({ host })) > 0) await requestResume(core.redis, host);
          return;
        }
        await opts.send([
          {
            topic: opts.mainTopic,
            eventType: 'DeliveryRequested',
            messages: docs.map((d) => ({
              key: d.key,
              value: Buffer.from(d.job, 'base64'),
              headers: { [H_ATTEMPT]: '0', [H_RESUMED]: '1' },
            })),
          },
        ]);
        await parked().deleteMany({ _id: { $in: docs.map((d) => d._id) } });
        logger.info({ host, jobs: docs.length }, 'parked deliveries resumed');
      }
    } finally {
      await releaseResume(core.redis, host);
    }
  }

  // One probe: the oldest parked job of a host whose breaker is open.
  async function probe(host: string): Promise<void> {
    const doc = await parked().findOne({ host }, { sort: { seq: 1, _id: 1 } });
    if (!doc) {
      await resumeHost(core.redis, host);
      return;
    }
    const job = codec.decode(Buffer.from(doc.job, 'base64')).record as DeliveryRequested;
    const result = await attempt(job);
    if (result === null || result.kind !== 'failed') {
      if (result) await markDelivered(core.redis, deliveryDoneId(job.activityId, job.inbox), doneTtlMs);
      await parked().deleteOne({ _id: doc._id });
      if (result?.kind === 'delivered') deliveriesTotal.inc({ outcome: 'delivered', activity: job.activityType });
      logger.info({ host }, 'delivery probe got through; resuming the host');
      await resumeHost(core.redis, host);
    } else {
      deliveryFailures.inc({ class: result.class });
      await recordHostFailure(core.redis, settings, host, result.class, result.retryAfterMs);
    }
  }

  let gaugesAt = 0;
  // Queue depth (waiting + parked) and the oldest undelivered job per failing host, one query.
  async function refreshGauges(states: HostState[]): Promise<void> {
    if (Date.now() - gaugesAt < (opts.gaugesMs ?? 15_000)) return;
    gaugesAt = Date.now();
    const byHost = new Map<string, { n: number; oldest: Date }>();
    const groups = parked().aggregate<{ _id: string; n: number; oldest: Date }>([
      { $group: { _id: '$host', n: { $sum: 1 }, oldest: { $min: '$createdAt' } } },
    ]);
    for await (const g of groups) byHost.set(g._id, { n: g.n, oldest: g.oldest });
    deliveryQueueDepth.reset();
    deliveryOldestAge.reset();
    deliveryBreakersOpen.set(states.filter((s) => s.tripped > 0).length);
    for (const s of states) {
      const p = byHost.get(s.host);
      deliveryQueueDepth.set({ domain: s.host }, s.backlog + (p?.n ?? 0));
      const since = Math.min(s.since > 0 ? s.since : Infinity, p ? new Date(p.oldest).getTime() : Infinity);
      if (Number.isFinite(since)) deliveryOldestAge.set({ domain: s.host }, (Date.now() - since) / 1000);
    }
  }

  async function housekeeping(): Promise<void> {
    const states = await allHostStates(core.redis);
    await refreshGauges(states).catch((err: unknown) => logger.warn({ err }, 'delivery gauges not refreshed'));
    // Parked jobs of a host whose breaker is closed (an interrupted resume) are sent too.
    const parkedHosts = (await parked().distinct('host')) as string[];
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

  return { park, housekeeping };
}
