// Consumer lag: for every partition of the group's topics, the end offset minus the committed one.
import type { Admin } from 'kafkajs';
import { consumerLag } from '../../services/core/metrics.ts';

type TopicEnds = Awaited<ReturnType<Admin['fetchTopicOffsets']>>;

/**
 * The group's lag, each partition's also set on the gauge. `ends`: the topics' end offsets already
 * read in this round (by topic), shared by the groups measured in it; without it, read afresh.
 */
export async function measureLag(
  admin: Admin,
  pipeline: string,
  groupId: string,
  topics: string[],
  ends?: Map<string, Promise<TopicEnds>>,
): Promise<number> {
  let total = 0;
  const committed = await admin.fetchOffsets({ groupId, topics });
  for (const { topic, partitions } of committed) {
    let read = ends?.get(topic);
    if (!read) {
      read = admin.fetchTopicOffsets(topic);
      ends?.set(topic, read);
    }
    for (const end of await read) {
      const done = partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
      const from = Number(done) >= 0 ? Number(done) : Number(end.low);
      const lag = Math.max(0, Number(end.high) - from);
      consumerLag.set({ pipeline, topic, partition: String(end.partition) }, lag);
      total += lag;
    }
  }
  return total;
}

export interface GaugedGroup {
  admin: Admin;
  /** The brokers' addresses: groups share end offsets only within one cluster. */
  cluster: string;
  pipeline: string;
  groupId: string;
  topics: readonly string[];
  onError(err: unknown): void;
}

/**
 * The groups this process gauges, by interval: one round per interval measures them all, reading
 * each topic's end offsets once. A timer per group read them once per group (an idle `all`
 * process's gauges made 8.1 Kafka requests a second; 7.0 shared, most groups' retry topics being
 * their own).
 */
const rounds = new Map<number, { groups: Set<GaugedGroup>; timer: NodeJS.Timeout }>();

async function gaugeRound(groups: Iterable<GaugedGroup>): Promise<void> {
  const ends = new Map<string, Map<string, Promise<TopicEnds>>>();
  await Promise.all(
    [...groups].map((g) => {
      let shared = ends.get(g.cluster);
      if (!shared) ends.set(g.cluster, (shared = new Map()));
      return measureLag(g.admin, g.pipeline, g.groupId, [...g.topics], shared).catch(g.onError);
    }),
  );
}

/** Gauges the group's lag every `intervalMs` until the returned function is called. */
export function gaugeLag(group: GaugedGroup, intervalMs: number): () => void {
  let round = rounds.get(intervalMs);
  if (!round) {
    const groups = new Set<GaugedGroup>();
    const timer = setInterval(() => void gaugeRound(groups), intervalMs);
    timer.unref();
    rounds.set(intervalMs, (round = { groups, timer }));
  }
  round.groups.add(group);
  const mine = round;
  return () => {
    mine.groups.delete(group);
    if (mine.groups.size === 0 && rounds.get(intervalMs) === mine) {
      clearInterval(mine.timer);
      rounds.delete(intervalMs);
    }
  };
}
