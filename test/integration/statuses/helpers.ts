// Shared by the statuses tests: a core on the real Kafka sink that also records what it published,
// a listening API server, and a small JSON client.
import type { Config } from '../../../services/core/config.ts';
import { createCore, type Core } from '../../../services/core/context.ts';
import { createLogger } from '../../../services/core/logger.ts';
import { createKafkaEventSink } from '../../../services/core/events/kafkaSink.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';

export interface RecordingCore {
  core: Core;
  published: OutboxEvent[];
}

export async function statusesCore(config: Config): Promise<RecordingCore> {
  const logger = createLogger(config.logLevel, 'test');
  const kafka = await createKafkaEventSink(config, logger);
  const published: OutboxEvent[] = [];
  const sink = {
    async publish(events: OutboxEvent[]) {
      await kafka.publish(events);
      published.push(...events);
    },
    close: () => kafka.close?.() ?? Promise.resolve(),
  };
  return { core: await createCore(config, { sink, logger, outboxGraceMs: 200 }), published };
}

export interface JsonResponse {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test responses are checked field by field
  headers: Headers;
}

export function client(base: string) {
  return async function call(method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
}
