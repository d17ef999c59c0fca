// A delivery job as the worker handles it: the decoded DeliveryRequested with where it came from
// and where it stands, the headers it carries between hops, and the message that puts it (back)
// into a delay tier.
import { createHash } from 'node:crypto';
import type { KafkaMessage, Message } from 'kafkajs';
import type { DeliveryRequested } from '../../schemas/index.ts';
import { dueAt, failedMessage, failuresSoFar, header, originOf } from '../runtime/retry.ts';

/** When a job in a delay topic may leave its current hop (ms). */
export const H_HOP_DUE = 'delay-hop-due';
/** A parked job sent again after its host's breaker closed: not parked again for that. */
export const H_RESUMED = 'delivery-resumed';
/** The job's number in its host's queue of waiting jobs. */
export const H_QUEUE_SEQ = 'delivery-queue-seq';

export const DELIVERY_TOPIC = 'delivery';
export const delayTopicOf = (ms: number) => `delivery.delay.${ms}`;

export interface Item {
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
  /** pending → working → (attempting →) finished; see the batch deadline in worker.ts. */
  phase: 'pending' | 'working' | 'attempting' | 'finished';
  /** Another run of a delivery that may still be in flight from an abandoned batch. */
  inFlight: boolean;
}

/** Once-only id of an activity at an inbox. */
export function deliveryDoneId(activityId: string, inbox: string): string {
  return createHash('sha1').update(`${activityId} ${inbox}`).digest('hex');
}

export function hostOfInbox(inbox: string): string {
  try {
    return new URL(inbox).host.toLowerCase();
  } catch {
    return '';
  }
}

/** The job a message carries, read from the delivery topic (`tier` null) or a delay tier. */
export function itemOf(message: KafkaMessage, job: DeliveryRequested, tier: number | null): Item {
  const seq = tier !== null ? header(message.headers, H_QUEUE_SEQ) : undefined;
  return {
    message,
    job,
    host: hostOfInbox(job.inbox),
    failures: failuresSoFar(message),
    due: dueAt(message),
    tier,
    resumed: header(message.headers, H_RESUMED) === '1',
    seq: seq ? Number(seq) : null,
    doneId: deliveryDoneId(job.activityId, job.inbox),
    done: false,
    phase: 'pending',
    inFlight: false,
  };
}

/** The message that puts a job (back) into the delay tier `tier` (ms), due at `due`. */
export function delayedMessage(
  item: Item,
  mainTopic: string,
  tier: number,
  due: number,
  failures: number,
  reason: string,
  now = Date.now(),
): Message {
  const origin = originOf(item.message, { topic: mainTopic, partition: 0, offset: item.message.offset });
  const message = failedMessage(item.message, origin, failures, new Error(reason), due);
  message.key = item.host;
  (message.headers ??= {})[H_HOP_DUE] = String(now + tier);
  if (item.seq !== null) message.headers[H_QUEUE_SEQ] = String(item.seq);
  else delete message.headers[H_QUEUE_SEQ];
  return message;
}
