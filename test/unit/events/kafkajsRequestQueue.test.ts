// kafkajs 2.2.4's request queue, as patches/kafkajs+2.2.4.patch leaves it (ADR 0017): a connection
// with nothing waiting keeps no timer, and a request held back by the broker's throttling is still
// sent once the throttle ends.
import { createRequire } from 'node:module';

interface Entry {
  correlationId: number;
  apiName: string;
  apiKey: number;
  apiVersion: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

interface Queue {
  push(request: { entry: Entry; expectResponse: boolean; sendRequest: () => void }): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer; size: number }): void;
  maybeThrottle(ms: number): void;
  destroy(): void;
  throttleCheckTimeoutId: NodeJS.Timeout | null | undefined;
}

// The queue is kafkajs's internal module: its own file, as the patch changes it.
const RequestQueue = createRequire(__filename)('kafkajs/src/network/requestQueue/index.js') as new (
  opts: Record<string, unknown>,
) => Queue;

const silent = { debug() {}, info() {}, warn() {}, error() {} };

function queue(): Queue {
  return new RequestQueue({
    maxInFlightRequests: null,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'test',
    broker: 'localhost:9092',
    logger: silent,
  });
}

function entry(correlationId: number): { entry: Entry; answered: Promise<unknown> } {
  let resolve!: (value: unknown) => void;
  let reject!: (err: unknown) => void;
  const answered = new Promise((res, rej) => ((resolve = res), (reject = rej)));
  return { entry: { correlationId, apiName: 'Fetch', apiKey: 1, apiVersion: 11, resolve, reject }, answered };
}

describe('kafkajs request queue (patched)', () => {
  it('keeps no timer once its requests are answered', async () => {
    const q = queue();
    try {
      const { entry: e, answered } = entry(1);
      q.push({ entry: e, expectResponse: true, sendRequest: () => {} });
      q.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
      await answered;
      // Unpatched, the answer scheduled a check with a negative delay, which Node runs after 1 ms
      // and which schedules the next one: a loop per connection for the process's lifetime.
      expect(q.throttleCheckTimeoutId ?? null).toBeNull();
    } finally {
      q.destroy();
    }
  });

  it('sends a request held back by throttling when the throttle ends', async () => {
    const q = queue();
    try {
      q.maybeThrottle(30);
      let sent!: () => void;
      const wasSent = new Promise<void>((resolve) => (sent = resolve));
      const { entry: e } = entry(2);
      const pushedAt = Date.now();
      q.push({ entry: e, expectResponse: true, sendRequest: () => sent() });
      expect(q.throttleCheckTimeoutId).toBeTruthy();
      await wasSent;
      expect(Date.now() - pushedAt).toBeGreaterThanOrEqual(25);
    } finally {
      q.destroy();
    }
  });
});
