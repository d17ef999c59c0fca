// Readiness: can this process reach MongoDB, Redis and Kafka right now? Each check is bounded by
// a short timeout so a hung dependency makes the endpoint answer 503 quickly instead of hanging.
import { Kafka, logLevel, type Admin } from 'kafkajs';
import type { Core } from '../../core/context.ts';

export interface CheckResult {
  status: 'up' | 'down';
  latencyMs: number;
}

const TIMEOUT_MS = 2000;

async function timed(probe: () => Promise<unknown>): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), TIMEOUT_MS);
      }),
    ]);
    return { status: 'up', latencyMs: Math.round(performance.now() - started) };
  } catch {
    return { status: 'down', latencyMs: Math.round(performance.now() - started) };
  } finally {
    clearTimeout(timer);
  }
}

export function createReadinessChecks(core: Core) {
  // A new client's first connection goes to the first broker of its list: after a failure the
  // next attempt starts from the next broker, so one broker down of several is not "Kafka down"
  // (which made every API process unready, and the load balancer refuse all requests).
  let attempt = 0;
  const kafka = () => {
    const brokers = core.config.kafkaBrokers;
    const from = attempt++ % brokers.length;
    return new Kafka({
      clientId: 'fedisrv-readiness',
      brokers: [...brokers.slice(from), ...brokers.slice(0, from)],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: TIMEOUT_MS,
      retry: { retries: 0 },
    });
  };
  let admin: Admin | null = null;

  async function kafkaUp(): Promise<void> {
    try {
      if (!admin) {
        admin = kafka().admin();
        await admin.connect();
      }
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length === 0) throw new Error('no brokers');
    } catch (err) {
      // Reconnect from scratch next time.
      const stale = admin;
      admin = null;
      await stale?.disconnect().catch(() => undefined);
      throw err;
    }
  }

  return {
    async check(): Promise<{ mongodb: CheckResult; redis: CheckResult; kafka: CheckResult }> {
      const [mongodb, redis, kafkaResult] = await Promise.all([
        timed(() => core.db.command({ ping: 1 })),
        timed(() => core.redis.ping()),
        timed(kafkaUp),
      ]);
      return { mongodb, redis, kafka: kafkaResult };
    },
    async close(): Promise<void> {
      await admin?.disconnect().catch(() => undefined);
      admin = null;
    },
  };
}
