// Consumer lag: for every partition of the group's topics, the end offset minus the committed one.
import type { Admin } from 'kafkajs';
import { consumerLag } from '../../services/core/metrics.ts';

export async function measureLag(admin: Admin, pipeline: string, groupId: string, topics: string[]): Promise<number> {
  let total = 0;
  const committed = await admin.fetchOffsets({ groupId, topics });
  for (const { topic, partitions } of committed) {
    const ends = await admin.fetchTopicOffsets(topic);
    for (const end of ends) {
      const done = partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
      const from = Number(done) >= 0 ? Number(done) : Number(end.low);
      const lag = Math.max(0, Number(end.high) - from);
      consumerLag.set({ pipeline, topic, partition: String(end.partition) }, lag);
      total += lag;
    }
  }
  return total;
}
