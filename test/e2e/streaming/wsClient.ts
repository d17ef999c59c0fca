// A plain WebSocket client of the streaming API for tests (Node's WebSocket): records every
// message, waits for one, and posts through the API until a subscription is proven live.
import type { JsonClient } from '../../support/http.ts';
import type { TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';

export interface Received {
  stream?: string[];
  event?: string;
  payload?: string;
  error?: string;
}

export class Client {
  readonly messages: Received[] = [];
  closed: { code: number } | null = null;
  readonly socket: WebSocket;
  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.addEventListener('message', (e) => this.messages.push(JSON.parse(String(e.data)) as Received));
    socket.addEventListener('close', (e) => (this.closed = { code: e.code }));
  }

  static open(port: number, query: string, protocols?: string[]): Promise<Client> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/api/v1/streaming?${query}`, protocols);
    return new Promise((resolve, reject) => {
      socket.addEventListener('open', () => resolve(new Client(socket)), { once: true });
      socket.addEventListener('error', () => reject(new Error('WebSocket refused')), { once: true });
    });
  }

  send(message: object): void {
    this.socket.send(JSON.stringify(message));
  }

  async waitFor(predicate: (m: Received) => boolean, what: string): Promise<Received> {
    return eventually(async () => this.messages.find(predicate), 20_000, what);
  }

  close(): void {
    this.socket.close();
  }
}

export const statusOf = (m: Received) =>
  JSON.parse(m.payload ?? '{}') as { id: string; content: string; filtered?: unknown[]; language?: string | null };

export async function post(call: JsonClient, user: TestUser, body: Record<string, unknown>): Promise<string> {
  const res = await call('POST', '/api/v1/statuses', user.token, body);
  if (res.status !== 200) throw new Error(`post: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Streams subscribe asynchronously: posts until one arrives, proving the subscription is live. */
export async function live(
  call: JsonClient,
  client: Client,
  author: TestUser,
  body: Record<string, unknown>,
): Promise<void> {
  await eventually(
    async () => {
      const id = await post(call, author, body);
      return eventually(
        async () => client.messages.find((m) => m.event === 'update' && statusOf(m).id === id),
        3_000,
        'probe',
      ).catch(() => undefined);
    },
    30_000,
    'a live subscription',
  );
}
