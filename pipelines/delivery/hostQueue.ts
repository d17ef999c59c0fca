// The per-host queue's rules, as pure functions (the Redis and Kafka work is in worker.ts): what
// to do with a job given its host's state, when to give up, and the host's state after an answer.
// One host's jobs go out in order: a job queues behind the host's waiting jobs, or waits while
// the host backs off; a job from the queue goes on only when due and the oldest of its host.
import type { HostState, FailureOutcome } from '../../services/core/activitypub/delivery/hostState.ts';
import type { DeliverySettings } from '../../services/core/activitypub/delivery/settings.ts';
import type { RetryPolicy } from '../runtime/retry.ts';
import type { Item } from './job.ts';

/** A waiting job that is not due yet (or whose earlier run may still be in flight) hops again. */
export function waitingJobDue(item: Item, now: number): boolean {
  return item.due <= now + 20 && !item.inFlight;
}

export type Step =
  /** Already delivered (a redelivered or re-planned job). */
  | 'duplicate'
  /** Too old, or no host to send to. */
  | 'drop'
  /** The host's breaker is open: into MongoDB until it closes. */
  | 'park'
  /** The host backs off, or older jobs of it wait: queue behind them. */
  | 'queue'
  | 'attempt';

/** What to do with a job that may go on (not a waiting job held back by waitingJobDue). */
export function stepFor(item: Item, state: HostState | null, now: number, maxAgeMs: number): Step {
  if (item.done) return 'duplicate';
  if (now - item.job.createdAt.getTime() > maxAgeMs || item.host === '') return 'drop';
  if (state && state.tripped > 0 && !item.resumed) return 'park';
  if (state && (state.until > now || (item.seq === null && state.backlog > 0))) return 'queue';
  return 'attempt';
}

/**
 * Delivery's retry policy: one retry per backoff level, then it gives up. The wait itself is the
 * host's (its backoff level, or its Retry-After, from recordHostFailure), shared by its jobs.
 */
export function deliveryRetryPolicy(settings: Pick<DeliverySettings, 'retryDelaysMs'>): RetryPolicy {
  const delays = settings.retryDelaysMs;
  return (failures) => (failures > delays.length ? null : delays[failures - 1]);
}

/** After a failed attempt: give up, park (the failure opened the breaker) or wait in the queue. */
export function afterFailure(policy: RetryPolicy, failures: number, tripped: boolean): 'give_up' | 'park' | 'wait' {
  if (policy(failures) === null) return 'give_up';
  return tripped ? 'park' : 'wait';
}

/** The host's state after a failed attempt. */
export function stateAfterFailure(
  state: HostState | null,
  host: string,
  outcome: FailureOutcome,
  errorClass: string,
  now: number,
): HostState {
  return {
    ...(state ?? { host, backlog: 0, error: null }),
    fails: outcome.fails,
    since: outcome.since,
    level: outcome.level,
    until: outcome.until,
    tripped: outcome.tripped ? now : 0,
    error: errorClass,
  };
}

/** The host's state after an answer that ends its failure streak (null: nothing left to track). */
export function stateAfterSuccess(state: HostState): HostState | null {
  return state.backlog > 0 ? { ...state, fails: 0, since: 0, until: 0, tripped: 0 } : null;
}

/** The host's state once a job joined its queue of waiting jobs. */
export function stateWithWaiting(state: HostState | null, host: string): HostState {
  if (state) return { ...state, backlog: state.backlog + 1 };
  return { host, fails: 0, since: 0, until: 0, level: 0, tripped: 0, backlog: 1, error: null };
}
