// Retry partitions paused until their head message is due. Pausing (not sleeping) keeps the
// consumer fetching other partitions and heartbeating, so it never overruns its session timeout.
export class Partitions {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /** Pauses through `pause` (kafkajs's eachBatch helper) and resumes at `due`. */
  pauseUntil(topic: string, partition: number, due: number, pause: () => () => void): void {
    const key = `${topic}/${partition}`;
    // A rebalance may have resumed the partition while its timer was pending: pause it again.
    clearTimeout(this.timers.get(key));
    const resume = pause();
    const timer = setTimeout(
      () => {
        this.timers.delete(key);
        resume();
      },
      Math.max(0, due - Date.now()),
    );
    this.timers.set(key, timer);
  }

  clear(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
