// Dead-letter replay, for operators once the cause is fixed: moves what a pipeline's dead-letter
// topic holds (up to its end at the time of the call) back to the pipeline's retry topic, due now
// and with its attempts reset. A consumer group of its own (`<prefix>.<name>.dlq-replay`) remembers
// how far earlier replays went, so each dead letter is replayed once.
import { Partitioners } from 'kafkajs';
import type { Core } from '../../services/core/context.ts';
import { createKafka, topicName } from '../../services/core/events/kafka.ts';
import { H_ATTEMPT, H_DUE_AT } from './retry.ts';

export async function replayDeadLetters(
  core: Core,
  pipeline: string,
  opts: { timeoutMs?: number } = {},
): Promise<number> {
  const { config } = core;
  const dlq = topicName(config, `${pipeline}.dlq`);
  const retry = topicName(config, `${pipeline}.retry`);
  const groupId = `${config.kafkaTopicPrefix}.${pipeline}.dlq-replay`;
  const kafka = createKafka(config, core.logger, `fedisrv-${pipeline}-dlq-replay`);
  const admin = kafka.admin();
  await admin.connect();
  // Where each partition ends now, and how far earlier replays went.
  const ends = new Map((await admin.fetchTopicOffsets(dlq)).map((p) => [p.partition, BigInt(p.high)]));
  const [done] = await admin.fetchOffsets({ groupId, topics: [dlq] });
  const starts = new Map((await admin.fetchTopicOffsets(dlq)).map((p) => [p.partition, BigInt(p.low)]));
  for (const p of done?.partitions ?? []) if (BigInt(p.offset) >= 0n) starts.set(p.partition, BigInt(p.offset));
  await admin.disconnect();
  const remaining = new Set([...ends].filter(([p, end]) => (starts.get(p) ?? 0n) < end).map(([p]) => p));
  if (remaining.size === 0) return 0;

  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 500 });
  let replayed = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  await producer.connect();
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [dlq], fromBeginning: true });
    await consumer.run({
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        const end = ends.get(batch.partition) ?? 0n;
        const messages = batch.messages.filter((m) => BigInt(m.offset) < end);
        if (messages.length > 0) {
          await producer.send({
            topic: retry,
            acks: -1,
            messages: messages.map((m) => ({
              key: m.key,
              value: m.value,
              headers: { ...m.headers, [H_ATTEMPT]: '0', [H_DUE_AT]: String(Date.now()) },
            })),
          });
          replayed += messages.length;
          resolveOffset(messages[messages.length - 1].offset);
        }
        await heartbeat();
        const last = messages[messages.length - 1];
        if (last && BigInt(last.offset) + 1n >= end) remaining.delete(batch.partition);
        if (remaining.size === 0) finish();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.timeoutMs ?? 60_000)));
    await Promise.race([finished, timedOut]);
    clearTimeout(timer);
    if (remaining.size > 0) throw new Error(`dead-letter replay of ${pipeline} timed out after ${replayed} messages`);
    return replayed;
  } finally {
    await consumer.disconnect();
    await producer.disconnect();
  }
}
