// Retry and dead-letter bookkeeping carried in Kafka headers. A failed event is re-published, with
// its original key and bytes, to the pipeline's retry topic with the time it is due; after
// `maxAttempts` failures (or when it cannot be decoded at all) it goes to the dead-letter topic.
import type { IHeaders, KafkaMessage, Message } from 'kafkajs';

export const H_ATTEMPT = 'retry-attempt';
export const H_DUE_AT = 'retry-due-at';
export const H_ORIGINAL_TOPIC = 'original-topic';
export const H_ORIGINAL_PARTITION = 'original-partition';
export const H_ORIGINAL_OFFSET = 'original-offset';
export const H_ERROR = 'error';

export function header(headers: IHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  if (v === undefined) return undefined;
  const first = Array.isArray(v) ? v[0] : v;
  return first === undefined ? undefined : first.toString();
}

/** How many times the message's event failed already (0 for a message from an event topic). */
export function failuresSoFar(message: KafkaMessage): number {
  const n = Number(header(message.headers, H_ATTEMPT) ?? '0');
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

export function dueAt(message: KafkaMessage): number {
  const n = Number(header(message.headers, H_DUE_AT) ?? '0');
  return Number.isFinite(n) ? n : 0;
}

export interface Origin {
  topic: string;
  partition: number;
  offset: string;
}

/** Where a message came from first (the event topic, even after several retries). */
export function originOf(message: KafkaMessage, read: Origin): Origin {
  const topic = header(message.headers, H_ORIGINAL_TOPIC);
  if (topic === undefined) return read;
  return {
    topic,
    partition: Number(header(message.headers, H_ORIGINAL_PARTITION) ?? read.partition),
    offset: header(message.headers, H_ORIGINAL_OFFSET) ?? read.offset,
  };
}

export function retryDelay(delays: readonly number[], failures: number): number {
  return delays[Math.min(failures, delays.length) - 1] ?? 0;
}

/**
 * When to try again after `failures` failures (ms), or null to give up: a pure function, like
 * Fedify's RetryPolicy, so each strategy's schedule is unit-tested on its own.
 */
export type RetryPolicy = (failures: number) => number | null;

/** Delay 1, 2, ... (the last repeats) until `maxAttempts` attempts have failed. */
export function stepRetryPolicy(delays: readonly number[], maxAttempts: number): RetryPolicy {
  return (failures) => (failures >= maxAttempts ? null : retryDelay(delays, failures));
}

function copyHeaders(headers: IHeaders | undefined): IHeaders {
  const out: IHeaders = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

/** The message to re-publish (to the retry or dead-letter topic) after a failure. */
export function failedMessage(
  message: KafkaMessage,
  origin: Origin,
  failures: number,
  error: unknown,
  due: number | null,
): Message {
  const headers = copyHeaders(message.headers);
  headers[H_ATTEMPT] = String(failures);
  headers[H_ORIGINAL_TOPIC] = origin.topic;
  headers[H_ORIGINAL_PARTITION] = String(origin.partition);
  headers[H_ORIGINAL_OFFSET] = origin.offset;
  headers[H_ERROR] = (error instanceof Error ? error.message : String(error)).slice(0, 1000);
  if (due === null) delete headers[H_DUE_AT];
  else headers[H_DUE_AT] = String(due);
  return { key: message.key, value: message.value, headers };
}
