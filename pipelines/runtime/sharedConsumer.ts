// One consumer group for several pipelines of one process (the `all` role; ADR 0013). Each post is
// read by six pipelines; as six groups that is six fetches, decodes and offset commits of the
// same message in one process. Members keep their own handlers, retry and dead-letter topics and
// metrics (runPipeline's strategy); what they share is the Kafka consumer: one fetch per
// partition, the due messages handed to every member that reads the topic, side by side, and one
// commit once all of them are done. Members must not wait on other servers: a slow member holds
// the partition for the others, which is why there is one group per latency class.
import type { KafkaMessage } from 'kafkajs';
import type { Core } from '../../services/core/context.ts';
import { startConsumer, type Consumer, type ConsumerOptions, type DueBatch, type Outgoing } from './consumer.ts';

/** A pipeline's part in a shared consumer: what runPipeline would give its own consumer. */
export interface SharedMember {
  name: string;
  /** Full topic names it reads (its source topics and its retry topic). */
  topics: readonly string[];
  held: ReadonlyMap<string, (message: KafkaMessage) => number>;
  outputs: ReadonlyArray<{ topic: string; partitions?: number }>;
  eachBatch(batch: DueBatch): Promise<Outgoing[]>;
}

export interface SharedMembership {
  send: Consumer['send'];
  /** The shared group's lag over this member's topics. */
  lag(): Promise<number>;
  /** Stops the shared consumer (all members stop together). */
  stop(): Promise<void>;
}

type Tuning = Pick<
  ConsumerOptions,
  'maxWaitTimeInMs' | 'minBytes' | 'partitionsConsumedConcurrently' | 'sessionTimeout' | 'heartbeatInterval'
>;

export interface SharedConsumer {
  readonly name: string;
  /** `<prefix>.<name>`: the group its members report as theirs. */
  readonly groupId: string;
  /** Adds a member; only before start(). */
  join(member: SharedMember): SharedMembership;
  /** Subscribes to every member's topics and waits for the group join. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A consumer group `<prefix>.<name>` for the members that join it. A new group starts where the
 * members' own groups (`<prefix>.<member>`) left off, so switching a deployment to it neither
 * loses nor replays events.
 */
export function sharedConsumer(core: Core, name: string, tuning: Tuning): SharedConsumer {
  const members: SharedMember[] = [];
  let consumer: Consumer | null = null;
  let stopped: Promise<void> | undefined;

  async function eachBatch(batch: DueBatch): Promise<Outgoing[]> {
    const readers = members.filter((m) => m.topics.includes(batch.topic));
    const outs = await Promise.all(readers.map((m) => m.eachBatch(batch)));
    return outs.flat();
  }

  const stop = () => {
    stopped ??= consumer ? consumer.stop() : Promise.resolve();
    return stopped;
  };

  return {
    name,
    groupId: `${core.config.kafkaTopicPrefix}.${name}`,
    join(member) {
      if (consumer) throw new Error(`shared consumer ${name}: ${member.name} joined after start`);
      members.push(member);
      const started = () => {
        if (!consumer) throw new Error(`shared consumer ${name}: not started`);
        return consumer;
      };
      return {
        send: (out, compression) => started().send(out, compression),
        lag: () => started().lagOf(member.name, member.topics),
        stop,
      };
    },
    async start() {
      if (members.length === 0) return;
      const { config } = core;
      consumer = await startConsumer({
        core,
        name,
        logger: core.logger.child({ consumer: name, members: members.map((m) => m.name) }),
        topics: [...new Set(members.flatMap((m) => m.topics))],
        held: new Map(members.flatMap((m) => [...m.held])),
        outputs: members.flatMap((m) => m.outputs),
        partitions: config.kafkaPartitions,
        seedFrom: members.map((m) => `${config.kafkaTopicPrefix}.${m.name}`),
        ...tuning,
        eachBatch,
      });
    },
    stop,
  };
}
