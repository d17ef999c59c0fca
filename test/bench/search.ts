// `npm run bench -- search [--statuses=N] [--queries=N]`: N statuses (default 1,000,000) of 12
// words drawn from a Zipf-distributed vocabulary of 20,000 words, by 10,000 indexable accounts,
// stored through the model code and indexed with the search-index pipeline's own functions; then
// two-word queries: the core status search (index walk, read-back and visibility checks) and the
// whole GET /api/v2/search?type=statuses over HTTP with rendering. Target: two-word query
// p99 < 100 ms. Uses the local servers, its own database and Redis namespace, removed at the end.
// `--keep` keeps the loaded data set (database and namespace `bench_search_kept_<N>`) and a later
// `--keep` run reuses it instead of loading again (cached renderings are dropped first, so the
// HTTP figures stay cold); `--drop` does the same and removes it at the end. `--slowest=N` lists
// the N slowest core queries with their posting-list sizes and the work they did.
import { deleteTestTopics } from '../support/kafka.ts';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { collection } from '../../services/core/db/mongo.ts';
import { accounts } from '../../services/core/model/accounts.ts';
import { statuses } from '../../services/core/model/statuses.ts';
import { postingKey, idScore } from '../../services/core/search/statusIndex.ts';
import { statusTerms } from '../../services/core/search/tokenize.ts';
import { searchStatuses, type SearchStats } from '../../services/core/search/statusSearch.ts';
import { deleteRedisNamespace } from '../support/core.ts';
import { createTestUser, startTestServer } from '../support/fixtures.ts';
import { accountDoc, statusDoc, statusId } from './dataSet.ts';
import { ms, printTable, printTargets, random, timeEach } from './lib.ts';

const { values: opts } = parseArgs({
  options: {
    statuses: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '500' },
    keep: { type: 'boolean', default: false },
    drop: { type: 'boolean', default: false },
    slowest: { type: 'string', default: '10' },
  },
});
const STATUSES = Number(opts.statuses);
const QUERIES = Number(opts.queries);
const ACCOUNTS = 10_000;
const VOCABULARY = 20_000;
const WORDS_PER_STATUS = 12;
const OFFSET = 100;

const kept = opts.keep || opts.drop;
const name = kept ? `bench_search_kept_${STATUSES}` : `bench_search_${randomBytes(4).toString('hex')}`;
/** Set once the whole data set is loaded, so an interrupted load is never reused. */
const LOADED_KEY = 'bench:loaded';
const url = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
url.pathname = `/${name}`;
const config = loadConfig({
  ...process.env,
  MONGO_URL: url.toString(),
  REDIS_NAMESPACE: name,
  KAFKA_TOPIC_PREFIX: name,
});
const core = await createCore(config, { sink: { publish: async () => undefined } });
const server = await startTestServer(core);

// Pronounceable made-up words, so the tokenizer sees ordinary text.
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'pe', 'da', 'gu', 'ri', 'zo', 'fa', 'bel', 'mor'];
const word = (i: number) => {
  let s = '';
  let n = i + 1;
  while (n > 0) {
    s += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return s;
};
const vocabulary = Array.from({ length: VOCABULARY }, (_, i) => word(i));
// Zipf (s = 1): the cumulative weights, sampled by binary search.
const cumulative: number[] = [];
let total = 0;
for (let r = 1; r <= VOCABULARY; r++) cumulative.push((total += 1 / r));
const rnd = random(42);
const zipf = () => {
  const x = rnd() * total;
  let lo = 0;
  let hi = VOCABULARY - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((cumulative[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

async function load(): Promise<void> {
  const t0 = Date.now();
  for (let from = 0; from < ACCOUNTS; from += 1000)
    await collection(core.db, accounts).insertMany(
      Array.from({ length: 1000 }, (_, k) => accountDoc(OFFSET + from + k)),
    );
  const BATCH = 2000;
  for (let from = 0; from < STATUSES; from += BATCH) {
    const docs = Array.from({ length: Math.min(BATCH, STATUSES - from) }, (_, k) => {
      const i = from + k;
      const doc = statusDoc(i, OFFSET + (i % ACCOUNTS), null);
      const text = Array.from({ length: WORDS_PER_STATUS }, () => vocabulary[zipf()]).join(' ');
      return { ...doc, text, content: `<p>${text}</p>`, tags: [], tagNames: [] };
    });
    await collection(core.db, statuses).insertMany(docs);
    const pipe = core.redis.pipeline();
    for (const d of docs)
      for (const term of statusTerms(d)) pipe.zadd(postingKey('public', term), idScore(d._id), String(d._id));
    await pipe.exec();
    if ((from / BATCH) % 50 === 0) console.log(`loaded ${from + docs.length} statuses`);
  }
  const loadSeconds = (Date.now() - t0) / 1000;
  console.log(`loaded and indexed ${STATUSES} statuses in ${loadSeconds.toFixed(0)} s`);
}

/**
 * Waits (3 minutes at most) until MongoDB answers reads promptly again: right after a bulk load
 * of this size the MongoDB-wire stand-in spends a while collecting garbage and compacting its
 * file, and once stopped answering for more than the driver's 10 s.
 */
async function settle(): Promise<void> {
  const t0 = Date.now();
  const probe = random(3);
  while (Date.now() - t0 < 180_000) {
    const times: number[] = [];
    for (let k = 0; k < 20; k++) {
      const start = performance.now();
      await collection(core.db, statuses).findOne({ _id: statusId(Math.floor(probe() * STATUSES)) });
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    if ((times[10] as number) < 10 && (times[19] as number) < 100) break;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  console.log(`MongoDB settled after the load in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/** Drops cached renderings (a reused data set's last run left them). */
async function dropRenderCache(): Promise<void> {
  const prefix = `${name}:`;
  let cursor = '0';
  do {
    const [next, keys] = await core.redis.scan(cursor, 'MATCH', `${prefix}render:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await core.redis.del(...keys.map((key) => key.slice(prefix.length)));
  } while (cursor !== '0');
}

try {
  const reuse = kept && (await core.redis.get(LOADED_KEY)) === String(STATUSES);
  if (reuse) {
    console.log(`reusing the data set ${name}`);
    await dropRenderCache();
  } else {
    if (kept) {
      await core.db.dropDatabase();
      await deleteRedisNamespace(core.redis, name);
    }
    await load();
    if (kept) await core.redis.set(LOADED_KEY, String(STATUSES));
    await settle();
  }
  const viewer = await createTestUser(core);
  const memory = /used_memory_human:(\S+)/.exec(await core.redis.info('memory'))?.[1] ?? '?';

  // Two-word queries: words of the top 2,000 ranks (what people type), drawn independently.
  const qrnd = random(7);
  const queries = Array.from({ length: QUERIES * 2 }, () => {
    const a = vocabulary[Math.floor(qrnd() * qrnd() * 2000)] as string;
    const b = vocabulary[Math.floor(qrnd() * qrnd() * 2000)] as string;
    return `${a} ${b}`;
  });
  let hits = 0;
  const traces: { ms: number; q: string; found: number; stats: SearchStats }[] = [];
  const warmup = Math.ceil(QUERIES / 10);
  const coreSearch = await timeEach(
    QUERIES,
    async (i) => {
      const stats: SearchStats = { postings: 0, candidates: 0, rounds: 0 };
      const start = process.hrtime.bigint();
      const q = queries[i] as string;
      const found = await searchStatuses(core, viewer.account, { q, limit: 20, offset: 0 }, stats);
      if (i >= warmup)
        traces.push({ ms: Number(process.hrtime.bigint() - start) / 1e6, q, found: found.length, stats });
      hits += found.length;
    },
    warmup,
  );
  const http = await timeEach(QUERIES, async (i) => {
    const res = await fetch(
      `${server.url}/api/v2/search?type=statuses&limit=20&q=${encodeURIComponent(queries[(i + QUERIES) % queries.length] as string)}`,
      { headers: { authorization: `Bearer ${viewer.token}` } },
    );
    if (res.status !== 200) throw new Error(`search: ${res.status}`);
    await res.json();
  });
  printTable(
    `search: ${STATUSES.toLocaleString('en')} statuses, ${VOCABULARY.toLocaleString('en')}-word Zipf vocabulary, Redis ${memory}`,
    ['query', 'p50 ms', 'p99 ms', 'max ms'],
    [
      [`two words, core search (avg ${(hits / (QUERIES * 1.1)).toFixed(1)} hits)`, coreSearch],
      ['two words, GET /api/v2/search?type=statuses (rendered)', http],
    ].map(([what, s]) => {
      const st = s as typeof http;
      return [what as string, ms(st.p50), ms(st.p99), ms(st.max)];
    }),
  );
  const slowest = traces.sort((a, b) => b.ms - a.ms).slice(0, Number(opts.slowest));
  const sizes = core.redis.pipeline();
  for (const t of slowest) for (const w of t.q.split(' ')) sizes.zcard(postingKey('public', w));
  const cards = ((await sizes.exec()) ?? []).map(([, n]) => Number(n));
  printTable(
    'slowest core queries',
    ['query', 'ms', 'list sizes', 'postings read', 'candidates read back', 'rounds', 'found'],
    slowest.map((t) => {
      const n = t.q.split(' ').map(() => cards.shift() ?? 0);
      return [
        t.q,
        ms(t.ms),
        n.join(' / '),
        String(t.stats.postings),
        String(t.stats.candidates),
        String(t.stats.rounds),
        String(t.found),
      ];
    }),
  );
  printTargets('search', [
    {
      what: `two-word query over ${STATUSES.toLocaleString('en')} statuses, core search p99`,
      measured: `${ms(coreSearch.p99)} ms`,
      target: '100 ms',
      met: coreSearch.p99 < 100,
    },
    {
      what: `two-word query over ${STATUSES.toLocaleString('en')} statuses, HTTP p99`,
      measured: `${ms(http.p99)} ms`,
      target: '100 ms',
      met: http.p99 < 100,
    },
  ]);
} finally {
  await server.close();
  if (opts.keep && !opts.drop) console.log(`kept the data set ${name} (reused by --keep, removed by --drop)`);
  else {
    await core.db.dropDatabase();
    await deleteRedisNamespace(core.redis, name);
    await deleteTestTopics(core.config);
  }
  await core.close();
}
process.exit(0);
