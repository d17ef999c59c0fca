// One attempt: the signed POST of a job, with its signer's key, at most `concurrency` in flight
// per process. A job whose signer is gone is dropped (null).
import type { Logger } from '../../services/core/logger.ts';
import type { Core } from '../../services/core/context.ts';
import type { DeliveryRequested } from '../../schemas/index.ts';
import type { DeliveryClient, DeliveryResult } from '../../services/core/activitypub/delivery/send.ts';
import { SignerCache, SignerMissingError } from '../../services/core/activitypub/delivery/signers.ts';
import { deliveriesTotal, deliverySeconds } from '../../services/core/activitypub/delivery/metrics.ts';

/** A counting semaphore: at most `max` tasks run at once. */
export class Limiter {
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

export type Attempt = (job: DeliveryRequested) => Promise<DeliveryResult | null>;

export function attemptWith(core: Core, client: DeliveryClient, concurrency: number, logger: Logger): Attempt {
  const signers = new SignerCache(core);
  const limiter = new Limiter(concurrency);
  return async (job) => {
    let key;
    try {
      key = await signers.keyFor(job.signerAccountId);
    } catch (err) {
      if (err instanceof SignerMissingError) {
        logger.warn({ activity: job.activityId, err }, 'delivery dropped: its signer is gone');
        deliveriesTotal.inc({ outcome: 'dropped', activity: job.activityType });
        return null;
      }
      throw err;
    }
    const stop = deliverySeconds.startTimer();
    const result = await limiter.run(() => client.deliver(job.inbox, job.body, key));
    stop();
    return result;
  };
}
