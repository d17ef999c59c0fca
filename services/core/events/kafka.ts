// The kafkajs client every process uses, logging through pino.
import { Kafka, logLevel as KafkaLogLevel, type LogEntry } from 'kafkajs';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

function kafkaLogCreator(logger: Logger) {
  const log = logger.child({ component: 'kafkajs' });
  return () =>
    ({ level, log: entry }: LogEntry) => {
      const { message, ...rest } = entry;
      // Retries are bounded on purpose (a caller must not hang while Kafka is away: the outbox relay
      // re-publishes and consumers dedup), so this warning is expected.
      if (message.startsWith('Limiting retries for the idempotent producer')) return;
      if (level <= KafkaLogLevel.ERROR) log.error(rest, message);
      else if (level === KafkaLogLevel.WARN) log.warn(rest, message);
      else if (level === KafkaLogLevel.INFO) log.debug(rest, message);
      else log.trace(rest, message);
    };
}

export function createKafka(config: Config, logger: Logger, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: config.kafkaBrokers,
    logLevel: KafkaLogLevel.WARN,
    logCreator: kafkaLogCreator(logger),
    retry: { retries: 8, initialRetryTime: 100 },
  });
}

/** Full topic name of a coarse topic (or a pipeline's own retry/dead-letter topic). */
export function topicName(config: Config, topic: string): string {
  return `${config.kafkaTopicPrefix}.${topic}`;
}
