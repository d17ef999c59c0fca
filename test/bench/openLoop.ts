// Worker thread of the timelines benchmark: GET /api/v1/timelines/home at a fixed rate (open
// loop), each request timed from when it was due, so a slow answer cannot slow the sending.
import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import { writeFileSync } from 'node:fs';

const { base, tokens, rate, seconds } = workerData as { base: string; tokens: string[]; rate: number; seconds: number };
const pool = new Pool(base, { connections: 128, pipelining: 1 });
const samples: number[] = [];
let failures = 0;
const total = rate * seconds;
const inFlight: Promise<void>[] = [];
/** (ms after the start a request was due, its latency): BENCH_SAMPLES_FILE writes them out. */
const timeline: [number, number][] = [];

async function send(i: number, due: number, record: boolean): Promise<void> {
  const res = await pool.request({
    path: '/api/v1/timelines/home?limit=20',
    method: 'GET',
    headers: { authorization: `Bearer ${tokens[i % tokens.length]}` },
  });
  await res.body.dump();
  if (res.statusCode !== 200) failures++;
  if (!record) return;
  samples.push(performance.now() - due);
  timeline.push([Math.round(due - start), Math.round(performance.now() - due)]);
}

/**
 * Sends `count` requests on the schedule from `at`; `record` says whether they are measured. The
 * first second is sent unmeasured: this thread's own code is cold (its JIT, its connections),
 * which delayed the first 100 ms of sends.
 */
async function schedule(at: number, count: number, record: boolean): Promise<void> {
  for (let i = 0; i < count;) {
    const now = performance.now();
    for (; i < count && at + (i * 1000) / rate <= now; i++) {
      const due = at + (i * 1000) / rate;
      const sent = send(i, due, record);
      if (record) inFlight.push(sent);
      else sent.catch(() => failures++);
    }
    await new Promise((r) => setTimeout(r, 1));
  }
}

const warmUp = performance.now();
await schedule(warmUp, rate, false);
const start = warmUp + 1000;
await schedule(start, total, true);
await Promise.all(inFlight);
await pool.close();
if (process.env.BENCH_SAMPLES_FILE)
  writeFileSync(
    process.env.BENCH_SAMPLES_FILE,
    `# start ${Math.round(performance.timeOrigin + start)} (epoch ms)\n` +
      timeline.map(([at, ms]) => `${at} ${ms}`).join('\n'),
  );
parentPort?.postMessage({ samples, failures });
