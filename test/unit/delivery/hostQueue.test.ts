// The delivery worker's units that need no server: the per-host queue's rules, the retry policy,
// the delay-tier message and the concurrency limit.
import type { KafkaMessage } from 'kafkajs';
import type { DeliveryRequested } from '../../../schemas/index.ts';
import {
  afterFailure,
  deliveryRetryPolicy,
  stateAfterFailure,
  stateAfterSuccess,
  stateWithWaiting,
  stepFor,
  waitingJobDue,
} from '../../../pipelines/delivery/hostQueue.ts';
import { delayedMessage, H_HOP_DUE, H_QUEUE_SEQ, itemOf, type Item } from '../../../pipelines/delivery/job.ts';
import { Limiter } from '../../../pipelines/delivery/attempt.ts';
import { H_ATTEMPT, H_DUE_AT, H_ORIGINAL_TOPIC, header } from '../../../pipelines/runtime/retry.ts';
import type { HostState } from '../../../services/core/activitypub/delivery/hostState.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const job: DeliveryRequested = {
  eventId: 'e1',
  occurredAt: new Date(NOW),
  activityId: 'https://local.example/a/1',
  activityType: 'Create',
  inbox: 'https://Remote.example/inbox',
  signerAccountId: '1',
  recipientAccountId: null,
  body: '{}',
  createdAt: new Date(NOW - 1_000),
} as unknown as DeliveryRequested;
const message = (headers: Record<string, string> = {}): KafkaMessage =>
  ({
    key: Buffer.from('remote.example'),
    value: Buffer.from('x'),
    headers,
    offset: '7',
    timestamp: '0',
    attributes: 0,
  }) as KafkaMessage;
const host = (over: Partial<HostState> = {}): HostState => ({
  host: 'remote.example',
  fails: 0,
  since: 0,
  until: 0,
  level: 0,
  tripped: 0,
  backlog: 0,
  error: null,
  ...over,
});
const fresh = (over: Partial<Item> = {}): Item => ({ ...itemOf(message(), job, null), ...over });

test('a job from the delivery topic: host, once-only id, not waiting', () => {
  const item = itemOf(message(), job, null);
  expect([item.host, item.seq, item.failures, item.resumed]).toEqual(['remote.example', null, 0, false]);
  expect(item.doneId).toMatch(/^[0-9a-f]{40}$/);
  const waiting = itemOf(message({ [H_QUEUE_SEQ]: '4', [H_ATTEMPT]: '2' }), job, 1_000);
  expect([waiting.seq, waiting.failures, waiting.tier]).toEqual([4, 2, 1_000]);
  // The queue number counts only on a delay tier.
  expect(itemOf(message({ [H_QUEUE_SEQ]: '4' }), job, null).seq).toBeNull();
});

test('each step of a job, from its host’s state', () => {
  const maxAge = 60_000;
  expect(stepFor(fresh({ done: true }), null, NOW, maxAge)).toBe('duplicate');
  expect(stepFor(fresh({ job: { ...job, createdAt: new Date(NOW - 120_000) } }), null, NOW, maxAge)).toBe('drop');
  expect(stepFor(fresh({ host: '' }), null, NOW, maxAge)).toBe('drop');
  expect(stepFor(fresh(), host({ tripped: NOW }), NOW, maxAge)).toBe('park');
  // A resumed job is not parked again for the same open breaker.
  expect(stepFor(fresh({ resumed: true }), host({ tripped: NOW }), NOW, maxAge)).toBe('attempt');
  expect(stepFor(fresh(), host({ until: NOW + 1 }), NOW, maxAge)).toBe('queue');
  // Older jobs of the host wait: a new job queues behind them, the oldest waiting one goes.
  expect(stepFor(fresh(), host({ backlog: 2 }), NOW, maxAge)).toBe('queue');
  expect(stepFor(fresh({ seq: 3 }), host({ backlog: 2 }), NOW, maxAge)).toBe('attempt');
  expect(stepFor(fresh(), null, NOW, maxAge)).toBe('attempt');
  expect(waitingJobDue(fresh({ due: NOW + 10 }), NOW)).toBe(true);
  expect(waitingJobDue(fresh({ due: NOW + 1_000 }), NOW)).toBe(false);
  expect(waitingJobDue(fresh({ due: NOW, inFlight: true }), NOW)).toBe(false);
});

test('one retry per backoff level, then it gives up; a tripping failure parks', () => {
  const policy = deliveryRetryPolicy({ retryDelaysMs: [1_000, 5_000, 30_000] });
  expect([1, 2, 3, 4].map(policy)).toEqual([1_000, 5_000, 30_000, null]);
  expect(afterFailure(policy, 3, false)).toBe('wait');
  expect(afterFailure(policy, 3, true)).toBe('park');
  expect(afterFailure(policy, 4, true)).toBe('give_up');
});

test('the host’s state after answers', () => {
  const failed = stateAfterFailure(
    null,
    'remote.example',
    { fails: 3, since: 5, level: 2, until: NOW + 9, tripped: true },
    'http_5xx',
    NOW,
  );
  expect(failed).toEqual(host({ fails: 3, since: 5, level: 2, until: NOW + 9, tripped: NOW, error: 'http_5xx' }));
  expect(stateAfterSuccess(host({ fails: 3, until: NOW + 9 }))).toBeNull();
  expect(stateAfterSuccess(host({ fails: 3, until: NOW + 9, level: 2, backlog: 1 }))).toEqual(
    host({ level: 2, backlog: 1 }),
  );
  expect(stateWithWaiting(null, 'remote.example')).toEqual(host({ backlog: 1 }));
  expect(stateWithWaiting(host({ backlog: 1 }), 'remote.example').backlog).toBe(2);
});

test('the delay-tier message keeps the job, its origin and its place in the queue', () => {
  const m = delayedMessage(fresh({ seq: 9 }), 'p.delivery', 1_000, NOW + 5_000, 2, 'http_5xx', NOW);
  expect(m.key).toBe('remote.example');
  expect(m.value).toEqual(Buffer.from('x'));
  const h = m.headers as Record<string, string>;
  expect([h[H_HOP_DUE], h[H_DUE_AT], h[H_ATTEMPT], h[H_QUEUE_SEQ], h[H_ORIGINAL_TOPIC]]).toEqual([
    String(NOW + 1_000),
    String(NOW + 5_000),
    '2',
    '9',
    'p.delivery',
  ]);
  const again = delayedMessage(
    fresh({ message: message({ [H_QUEUE_SEQ]: '9' }) }),
    'p.delivery',
    1_000,
    NOW,
    2,
    'x',
    NOW,
  );
  expect(header(again.headers, H_QUEUE_SEQ)).toBeUndefined();
});

test('the limiter runs at most its number of tasks at once', async () => {
  const limiter = new Limiter(2);
  let active = 0;
  let most = 0;
  const task = () =>
    limiter.run(async () => {
      active++;
      most = Math.max(most, active);
      await new Promise((r) => setImmediate(r));
      active--;
    });
  await Promise.all([task(), task(), task(), task(), task()]);
  expect(most).toBe(2);
});
