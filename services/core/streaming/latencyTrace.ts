// Stage timestamps of a status on its way from the POST to the streaming sockets, for the
// benchmarks only: with TRACE_STAGES=1 a process prints `trace {"id","stage","at"}` lines on
// stdout (`at` in epoch milliseconds with fractions, comparable between processes on one machine),
// which test/bench/streaming.ts reads from its child processes. Off, it costs one boolean test.
export const tracingStages = process.env.TRACE_STAGES === '1';

export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

let pending = '';

/** Lines of one turn of the event loop go out in one write: a write per line cost the traced process more than the stages it timed. */
export function traceStage(id: string | bigint, stage: string, at: number = epochMs()): void {
  if (!tracingStages) return;
  if (pending === '')
    setImmediate(() => {
      process.stdout.write(pending);
      pending = '';
    });
  pending += `trace ${JSON.stringify({ id: String(id), stage, at })}\n`;
}
