// The kafkajs client every process uses, logging through pino.
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { Kafka, logLevel as KafkaLogLevel, type ISocketFactory, type LogEntry } from 'kafkajs';
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
    ...(process.env.KAFKA_REQUEST_COUNTS ? { socketFactory: countingSockets(process.env.KAFKA_REQUEST_COUNTS) } : {}),
  });
}

// Kafka protocol API keys the pipelines send (the rest are counted by number).
const API_NAMES: Record<number, string> = {
  0: 'Produce',
  1: 'Fetch',
  2: 'ListOffsets',
  3: 'Metadata',
  8: 'OffsetCommit',
  9: 'OffsetFetch',
  10: 'FindCoordinator',
  11: 'JoinGroup',
  12: 'Heartbeat',
  14: 'SyncGroup',
  22: 'InitProducerId',
};
const requestCounts: Record<string, number> = {};
let countsFile: string | null = null;

/**
 * A benchmark's look at the round trips (`KAFKA_REQUEST_COUNTS=<file>`): every kafkajs client of
 * this process counts its requests by API (a request is one write: 4-byte size, then the API key),
 * written to the file every second like MONGO_COMMAND_COUNTS. Plain TCP only, as the local servers are.
 */
function countingSockets(file: string): ISocketFactory {
  if (!countsFile) {
    countsFile = file;
    setInterval(() => writeFileSync(file, JSON.stringify(requestCounts)), 1000).unref();
  }
  return ({ host, port, onConnect }) => {
    const socket = connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
    socket.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (Buffer.isBuffer(chunk) && chunk.length >= 6) {
        const key = chunk.readInt16BE(4);
        const name = API_NAMES[key] ?? `api ${key}`;
        requestCounts[name] = (requestCounts[name] ?? 0) + 1;
      }
      return write(chunk, ...rest);
    }) as typeof socket.write;
    return socket;
  };
}

/** Full topic name of a coarse topic (or a pipeline's own retry/dead-letter topic). */
export function topicName(config: Config, topic: string): string {
  return `${config.kafkaTopicPrefix}.${topic}`;
}
