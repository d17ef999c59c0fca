// `npm run bench -- trends [--events=N]`: the synthetic trend stream of the trends test (accounts,
// statuses and cards in MongoDB; StatusCreated / ReblogCreated / FavouriteCreated events with a
// known ranking), N events (default 200,000) published to the real Kafka topics first, then the
// trends pipeline (one process) consumes them: events per second until its lag is 0, then one
// refresh (scores and rankings). The ranking is checked against the expected one.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../services/core/config.ts';
import { createCore } from '../../services/core/context.ts';
import { createLogger } from '../../services/core/logger.ts';
import { createKafkaEventSink } from '../../services/core/events/kafkaSink.ts';
import { runTrendsPipeline } from '../../pipelines/trends/index.ts';
import { refreshTrends } from '../../services/core/trends/refresh.ts';
import { ranking } from '../../services/core/trends/queries.ts';
import { deleteRedisNamespace } from '../support/core.ts';
import { deleteTestTopics } from '../support/kafka.ts';
import { buildTrendStream } from '../support/trendStream.ts';
import { printTable, printTargets } from './lib.ts';

const { values: opts } = parseArgs({ options: { events: { type: 'string', default: '200000' } } });
const EVENTS = Number(opts.events);
const name = `bench_trends_${randomBytes(4).toString('hex')}`;
const url = new URL(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27018/fedi');
url.pathname = `/${name}`;
const config = loadConfig({
  ...process.env,
  MONGO_URL: url.toString(),
  REDIS_NAMESPACE: name,
  KAFKA_TOPIC_PREFIX: name,
});
const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', 'bench');
const sink = await createKafkaEventSink(config, logger);
const core = await createCore(config, { sink, logger });
try {
  const stream = await buildTrendStream(core, EVENTS);
  const p0 = Date.now();
  for (let i = 0; i < stream.events.length; i += 5_000) await sink.publish(stream.events.slice(i, i + 5_000));
  const publishSeconds = (Date.now() - p0) / 1000;
  const t0 = Date.now();
  const pipeline = await runTrendsPipeline(core, { refreshIntervalMs: 0, lagIntervalMs: 0 });
  while ((await pipeline.lag()) > 0) await new Promise((r) => setTimeout(r, 200));
  const consumeSeconds = (Date.now() - t0) / 1000;
  await pipeline.stop();
  const r0 = Date.now();
  await refreshTrends(core, stream.atMs);
  const refreshMs = Date.now() - r0;
  const tags = (await ranking(core, 'tag')).map((i) => i.item);
  const statuses = (await ranking(core, 'status')).map((i) => i.item);
  const links = (await ranking(core, 'link')).map((i) => i.item);
  const correct =
    JSON.stringify(tags) === JSON.stringify(stream.expected.tags) &&
    JSON.stringify(statuses) === JSON.stringify(stream.expected.statuses) &&
    JSON.stringify(links) === JSON.stringify(stream.expected.links);
  const rate = EVENTS / consumeSeconds;
  printTable(
    `trends: ${EVENTS.toLocaleString('en')} events, one pipeline process (consumer group start included)`,
    ['step', 'time', 'rate'],
    [
      [
        'publish to Kafka (not the pipeline)',
        `${publishSeconds.toFixed(1)} s`,
        `${Math.round(EVENTS / publishSeconds)} events/s`,
      ],
      ['trends pipeline until lag 0', `${consumeSeconds.toFixed(1)} s`, `${Math.round(rate)} events/s`],
      ['refresh (score, rank, review requests)', `${refreshMs} ms`, ''],
      ['ranking as expected', correct ? 'yes' : 'NO', ''],
    ],
  );
  printTargets('trends', [
    {
      what: 'pipeline throughput',
      measured: `${Math.round(rate)} events/s`,
      target: 'none; ranking correct',
      met: correct,
    },
  ]);
} finally {
  await core.db.dropDatabase();
  await deleteRedisNamespace(core.redis, name);
  await deleteTestTopics(config).catch(() => undefined);
  await core.close();
}
process.exit(0);
