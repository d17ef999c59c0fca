// Worker thread of the timelines benchmark: GET /api/v1/timelines/home at a fixed rate (open
// loop), each request timed from when it was due, so a slow answer cannot slow the sending.
import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';

const { base, tokens, rate, seconds } = workerData as { base: string; tokens: string[]; rate: number; seconds: number };
const pool = new Pool(base, { connections: 128, pipelining: 1 });
const samples: number[] = [];
let failures = 0;
const total = rate * seconds;
const start = performance.now();
const inFlight: Promise<void>[] = [];

async function send(i: number, due: number): Promise<void> {
  const res = await pool.request({
    path: '/api/v1/timelines/home?limit=20',
    method: 'GET',
    headers: { authorization: `Bearer ${tokens[i % tokens.length]}` },
  });
  await res.body.dump();
  if (res.statusCode !== 200) failures++;
  samples.push(performance.now() - due);
}

for (let i = 0; i < total;) {
  const now = performance.now();
  for (; i < total && start + (i * 1000) / rate <= now; i++) inFlight.push(send(i, start + (i * 1000) / rate));
  await new Promise((r) => setTimeout(r, 1));
}
await Promise.all(inFlight);
await pool.close();
parentPort?.postMessage({ samples, failures });
