// The main thread's garbage-collection pauses and event-loop stalls of a Node process, appended
// to a file as `<epoch ms> <pause ms> <kind>`, so that slow requests can be laid beside the pauses they waited
// through (lib.ts, slowBursts). The api benchmark preloads this module into its server
// (`--import`, the file named by BENCH_NODE_GC_LOG) and calls logPauses for its own load
// generator. A benchmark's instrument only: the server itself never loads it.
import { appendFileSync } from 'node:fs';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';

const kinds: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};

/** A 10 ms timer firing this much late or later is logged as a stall of the event loop. */
const STALL_MS = 15;

/**
 * Appends this process's collection pauses of 1 ms or more to `file` from now on, and the times
 * its event loop stalled otherwise (`event-loop`: a long synchronous task, or the process not
 * given a core on a busy machine), found by a 10 ms timer's lateness.
 */
export function logPauses(file: string): void {
  let expected = performance.now() + 10;
  setInterval(() => {
    const now = performance.now();
    const late = now - expected;
    if (late >= STALL_MS)
      appendFileSync(file, `${Math.round(performance.timeOrigin + expected)} ${late.toFixed(1)} event-loop\n`);
    expected = now + 10;
  }, 10).unref();
  new PerformanceObserver((list) => {
    const lines = list
      .getEntries()
      .filter((e) => e.duration >= 1)
      .map((e) => {
        const kind = ((e as { detail?: { kind?: number } }).detail?.kind ?? 0) as number;
        return `${Math.round(performance.timeOrigin + e.startTime)} ${e.duration.toFixed(1)} ${kinds[kind] ?? kind}\n`;
      });
    if (lines.length > 0) appendFileSync(file, lines.join(''));
  }).observe({ entryTypes: ['gc'] });
}

if (process.env.BENCH_NODE_GC_LOG) logPauses(process.env.BENCH_NODE_GC_LOG);
