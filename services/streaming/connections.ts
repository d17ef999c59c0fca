// One streaming WebSocket connection: its viewer, the streams it listens to (multiplexed, as
// Mastodon's `{"type": "subscribe", "stream": ...}` messages ask), and the per-viewer filter that
// drops statuses of accounts the viewer blocks, mutes or is blocked by.
import type { Core } from '../core/context.ts';
import type { AccountDoc } from '../core/model/accounts.ts';
import type { AccessTokenDoc } from '../core/model/oauth.ts';
import { scopesAllow } from '../core/auth/scopes.ts';
import { collection } from '../core/db/mongo.ts';
import { blocks } from '../core/model/blocks.ts';
import { mutes } from '../core/model/mutes.ts';
import type { StreamMessage } from '../core/streaming/channels.ts';
import { resolveStream, scopesFor, StreamError, type StreamRequest } from './streams.ts';
import type { Subscriptions } from './subscriptions.ts';

export interface Viewer {
  token: AccessTokenDoc;
  account: AccountDoc | null;
}

/** What a connection emits: a stream message, or an error about a client request. */
export type Frame = { stream: string[]; event: string; payload: string } | { error: string; status: number };

export class Connection {
  private readonly core: Core;
  private readonly subscriptions: Subscriptions;
  readonly viewer: Viewer | null;
  private readonly emit: (frame: Frame) => void;
  private readonly streams = new Map<string, Promise<() => Promise<void>>>();
  private hidden = new Set<string>();
  private closed = false;

  constructor(core: Core, subscriptions: Subscriptions, viewer: Viewer | null, emit: (frame: Frame) => void) {
    this.core = core;
    this.subscriptions = subscriptions;
    this.viewer = viewer;
    this.emit = emit;
  }

  /** Loads whom the viewer does not want to see (refreshed by the server's sweep). */
  async refreshFilter(): Promise<void> {
    const me = this.viewer?.account?._id;
    if (me === undefined) return;
    const [mine, theirs, muted] = await Promise.all([
      collection(this.core.db, blocks)
        .find({ accountId: me }, { projection: { targetAccountId: 1 } })
        .toArray(),
      collection(this.core.db, blocks)
        .find({ targetAccountId: me }, { projection: { accountId: 1 } })
        .toArray(),
      collection(this.core.db, mutes).find({ accountId: me }).toArray(),
    ]);
    const now = new Date();
    this.hidden = new Set([
      ...mine.map((b) => String(b.targetAccountId)),
      ...theirs.map((b) => String(b.accountId)),
      ...muted.filter((m) => m.expiresAt === null || m.expiresAt > now).map((m) => String(m.targetAccountId)),
    ]);
  }

  private deliver(label: string[], message: StreamMessage): void {
    if (this.closed) return;
    if (message.event === 'update' && this.hidden.size > 0) {
      try {
        const status = JSON.parse(message.payload) as {
          account?: { id?: string };
          reblog?: { account?: { id?: string } } | null;
        };
        if (this.hidden.has(status.account?.id ?? '') || this.hidden.has(status.reblog?.account?.id ?? '')) return;
      } catch {
        return;
      }
    }
    this.emit({ stream: label, event: message.event, payload: message.payload });
  }

  private error(text: string, status = 400): void {
    if (!this.closed) this.emit({ error: text, status });
  }

  async subscribe(req: StreamRequest): Promise<void> {
    try {
      if (this.viewer && !scopesAllow(this.viewer.token.scopes, scopesFor(req.stream)))
        throw new StreamError('Access token does not have the required scopes');
      const stream = await resolveStream(this.core, this.viewer?.account ?? null, req);
      if (this.streams.has(stream.key) || this.closed) return;
      const listening = (async () => {
        const stops = await Promise.all(
          stream.channels.map((c) => this.subscriptions.listen(c, (m) => this.deliver(stream.label, m))),
        );
        return async () => {
          await Promise.all(stops.map((stop) => stop()));
        };
      })();
      this.streams.set(stream.key, listening);
      await listening;
    } catch (err) {
      if (err instanceof StreamError) this.error(err.message);
      else throw err;
    }
  }

  async unsubscribe(req: StreamRequest): Promise<void> {
    try {
      const stream = await resolveStream(this.core, this.viewer?.account ?? null, req);
      const listening = this.streams.get(stream.key);
      if (!listening) return;
      this.streams.delete(stream.key);
      await (
        await listening
      )();
    } catch (err) {
      if (err instanceof StreamError) this.error(err.message);
      else throw err;
    }
  }

  /** A client message: subscribe/unsubscribe; anything else gets an error, never a disconnect. */
  async handle(text: string): Promise<void> {
    let msg: { type?: unknown; stream?: unknown; tag?: unknown; list?: unknown };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      return this.error('Could not parse message');
    }
    if (typeof msg !== 'object' || msg === null || typeof msg.stream !== 'string')
      return this.error('Unknown stream type');
    const req: StreamRequest = {
      stream: msg.stream,
      tag: typeof msg.tag === 'string' ? msg.tag : undefined,
      list: typeof msg.list === 'string' || typeof msg.list === 'number' ? String(msg.list) : undefined,
    };
    if (msg.type === 'subscribe') return this.subscribe(req);
    if (msg.type === 'unsubscribe') return this.unsubscribe(req);
    return this.error('Unknown message type');
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.streams.values()];
    this.streams.clear();
    for (const listening of all) await (await listening)().catch(() => undefined);
  }
}
