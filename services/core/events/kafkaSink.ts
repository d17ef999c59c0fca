// The EventSink of every real process: an idempotent kafkajs producer (acks=all, one request in
// flight, so retries neither duplicate nor reorder within a partition). Each event goes to
// `<prefix>.<topic>` keyed by the event's key, its value the single-object-encoded Avro record,
// with the event type and id in headers (readable without decoding, e.g. by tools and the DLQ).
import { Partitioners, type Message } from 'kafkajs';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { EventSink, OutboxEvent } from './outbox.ts';
import { eventCodec } from '../../../schemas/codec.ts';
import { eventTopics } from '../../../schemas/index.ts';
import { createKafka, topicName } from './kafka.ts';
import { ensureEventTopics } from './topics.ts';
import { eventsProduced } from '../metrics.ts';

export const HEADER_EVENT_TYPE = 'event-type';
export const HEADER_EVENT_ID = 'event-id';

export interface KafkaEventSink extends EventSink {
  close(): Promise<void>;
}

/** Turns an outbox event into the Kafka message the sink sends (exported for tools and tests). */
export function eventMessage(event: OutboxEvent): { topic: string; message: Message } {
  const value = eventCodec().encode(event.type, {
    ...event.payload,
    eventId: event.eventId,
    occurredAt: event.occurredAt,
  });
  return {
    topic: eventTopics[event.type],
    message: {
      key: event.key,
      value,
      headers: { [HEADER_EVENT_TYPE]: event.type, [HEADER_EVENT_ID]: event.eventId },
    },
  };
}

export async function createKafkaEventSink(
  config: Config,
  logger: Logger,
  opts: { createTopics?: boolean } = {},
): Promise<KafkaEventSink> {
  const kafka = createKafka(config, logger, 'fedisrv-producer');
  if (opts.createTopics !== false) await ensureEventTopics(kafka, config);
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  return {
    async publish(events: OutboxEvent[]): Promise<void> {
      if (events.length === 0) return;
      const byTopic = new Map<string, Message[]>();
      for (const event of events) {
        const { topic, message } = eventMessage(event);
        const full = topicName(config, topic);
        byTopic.set(full, [...(byTopic.get(full) ?? []), message]);
      }
      await producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
      for (const event of events) eventsProduced.inc({ topic: eventTopics[event.type], type: event.type });
    },
    async close(): Promise<void> {
      await producer.disconnect();
    },
  };
}
