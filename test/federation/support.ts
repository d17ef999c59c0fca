// Federation test set-up: an instance of this server at http://localhost:<port> (its own
// LOCAL_DOMAIN, database, Redis namespace and topic prefix) with the pipelines federation needs
// running in-process, and FEDERATION_ALLOW_HTTP / ALLOWED_PRIVATE_ADDRESSES set so servers on this
// machine may reach each other. Several instances in one test federate with each other.
import type { Core } from '../../services/core/context.ts';
import type { OutboxEvent } from '../../services/core/events/outbox.ts';
import { buildApi, type Api } from '../../services/api/app.ts';
import { runIngressPipeline } from '../../pipelines/ingress/index.ts';
import { runFanOutPipeline } from '../../pipelines/fanout/index.ts';
import { runNotificationsPipeline } from '../../pipelines/notifications/index.ts';
import { pipelines as allPipelines, type RunningPipeline } from '../../pipelines/index.ts';
import { runDeliveryPipeline } from '../../pipelines/delivery/index.ts';
import { testConfig } from '../support/config.ts';
import { closeTestCore, createTestCore } from '../support/core.ts';
import { consumerTuning } from '../support/kafka.ts';
import { bindServer } from '../support/listening.ts';
import { client, type JsonClient } from '../support/http.ts';

export const LOOPBACK_FEDERATION = {
  FEDERATION_ALLOW_HTTP: 'true',
  ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1/32,::1/128',
  LOCAL_HTTPS: 'false',
};

export interface Instance {
  core: Core;
  published: OutboxEvent[];
  api: Api;
  /** http://localhost:<port> */
  url: string;
  /** localhost:<port> */
  domain: string;
  call: JsonClient;
  close(): Promise<void>;
}

export interface InstanceOptions {
  env?: Record<string, string>;
  /** Pipelines to run besides ingress, fan-out and notifications (e.g. 'delivery' once it exists). */
  extraPipelines?: string[];
}

export async function startInstance(opts: InstanceOptions = {}): Promise<Instance> {
  const bound = await bindServer();
  const { port } = bound;
  const domain = `localhost:${port}`;
  const { core, published } = await createTestCore(
    testConfig({ ...LOOPBACK_FEDERATION, LOCAL_DOMAIN: domain, PORT: String(port), ...(opts.env ?? {}) }),
  ).catch(async (err: unknown) => {
    await bound.close();
    throw err;
  });
  const running: RunningPipeline[] = [];
  let api: Api | null = null;
  const close = async () => {
    await api?.close();
    await bound.close();
    for (const p of running) await p.stop().catch(() => undefined);
    await closeTestCore(core);
  };
  try {
    running.push(await runIngressPipeline(core, consumerTuning));
    running.push(await runFanOutPipeline(core, consumerTuning));
    running.push(await runNotificationsPipeline(core, consumerTuning));
    for (const name of opts.extraPipelines ?? []) {
      const factory = allPipelines[name];
      if (factory) running.push(await factory(core));
    }
    api = await buildApi(core);
    await bound.serve(api);
  } catch (err) {
    await close();
    throw err;
  }
  const url = `http://${domain}`;
  return { core, published, api, url, domain, call: client(`http://127.0.0.1:${port}`), close };
}

/** Delivery tuned for tests: short sessions, quick fetches. */
const workerTuning = { sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100 };

/** The delivery pipeline of an instance, tuned for tests (two partitions, short sessions). */
export function runTestDelivery(core: Core): Promise<{ stop(): Promise<void> }> {
  return runDeliveryPipeline(core, { settings: { partitions: 2 }, planner: consumerTuning, worker: workerTuning });
}

export interface FederatingPair {
  a: Instance;
  b: Instance;
  /** Stops both delivery pipelines, then both instances. */
  close(): Promise<void>;
}

/** Two instances, each with its delivery pipeline running, that federate with each other. */
export async function startFederatingPair(
  opts: { a?: InstanceOptions; b?: InstanceOptions } = {},
): Promise<FederatingPair> {
  const [a, b] = await Promise.all([startInstance(opts.a), startInstance(opts.b)]);
  const deliveries: Array<{ stop(): Promise<void> }> = [];
  const close = async () => {
    for (const d of deliveries) await d.stop();
    await Promise.all([a.close(), b.close()]);
  };
  try {
    for (const instance of [a, b]) deliveries.push(await runTestDelivery(instance.core));
  } catch (err) {
    await close();
    throw err;
  }
  return { a, b, close };
}

/** Retries a check that asserts (throws) until it passes; after `ms` its last failure is thrown. */
export async function settles<T>(check: () => Promise<T>, ms = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) {
        if (err instanceof Error) err.message = `${what}: ${err.message}`;
        throw err;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
