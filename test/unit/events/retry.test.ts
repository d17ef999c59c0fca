import type { KafkaMessage } from 'kafkajs';
import {
  dueAt,
  failedMessage,
  failuresSoFar,
  originOf,
  retryDelay,
  stepRetryPolicy,
} from '../../../pipelines/runtime/retry.ts';

function message(headers: Record<string, string> = {}): KafkaMessage {
  return {
    key: Buffer.from('k'),
    value: Buffer.from('v'),
    headers,
    offset: '7',
    timestamp: '0',
    attributes: 0,
  };
}

describe('retry bookkeeping', () => {
  it('reads attempts and due time from headers (none on a fresh event)', () => {
    expect(failuresSoFar(message())).toBe(0);
    expect(dueAt(message())).toBe(0);
    expect(failuresSoFar(message({ 'retry-attempt': '2' }))).toBe(2);
    expect(failuresSoFar(message({ 'retry-attempt': 'junk' }))).toBe(0);
    expect(dueAt(message({ 'retry-due-at': '12345' }))).toBe(12345);
  });

  it('grows the delay with each failure and repeats the last', () => {
    const delays = [100, 1000, 5000];
    expect([1, 2, 3, 4, 9].map((n) => retryDelay(delays, n))).toEqual([100, 1000, 5000, 5000, 5000]);
  });

  it('the pipelines’ retry policy gives up once maxAttempts attempts have failed', () => {
    const policy = stepRetryPolicy([100, 1000], 4);
    expect([1, 2, 3, 4, 5].map(policy)).toEqual([100, 1000, 1000, null, null]);
  });

  it('keeps the original key, bytes, headers and origin through several retries', () => {
    const read = { topic: 'p.probe', partition: 1, offset: '7' };
    const first = failedMessage(message({ 'event-id': 'e1' }), originOf(message(), read), 1, new Error('boom'), 999);
    expect(first.key).toEqual(Buffer.from('k'));
    expect(first.value).toEqual(Buffer.from('v'));
    expect(first.headers).toMatchObject({
      'event-id': 'e1',
      'retry-attempt': '1',
      'retry-due-at': '999',
      'original-topic': 'p.probe',
      'original-partition': '1',
      'original-offset': '7',
      error: 'boom',
    });
    // Read back from the retry topic at another offset: the origin stays the event topic's.
    const again = { ...message(first.headers as Record<string, string>), offset: '0' };
    const origin = originOf(again, { topic: 'p.x.retry', partition: 0, offset: '0' });
    expect(origin).toEqual(read);
    const dead = failedMessage(again, origin, 2, 'still', null);
    expect(dead.headers?.['retry-due-at']).toBeUndefined();
    expect(dead.headers?.['retry-attempt']).toBe('2');
  });
});
