// One streaming WebSocket connection: its viewer, the streams it listens to (multiplexed, as
// Mastodon's `{"type": "subscribe", "stream": ...}` messages ask), and the per-viewer filtering of
// `update`/`status.update` as Mastodon's streaming server does it: accounts blocked either way or
// muted (author, booster, mentioned), blocked domains, chosen languages on public and hashtag
// streams, custom filters (`hide` in the stream's context drops the event; other matches are sent
// in the payload's `filtered`).
import type { Core } from '../core/context.ts';
import type { CachedAccount } from '../core/model/accounts.ts';
import type { AccessTokenDoc } from '../core/model/oauth.ts';
import type { CachedUser } from '../core/model/users.ts';
import { scopesAllow } from '../core/auth/scopes.ts';
import { matchFilters } from '../core/filters/match.ts';
import { presentFilterResults } from '../core/entities/filter.ts';
import type { StreamMessage } from '../core/streaming/channels.ts';
import { resolveStream, scopesFor, StreamError, type ResolvedStream, type StreamRequest } from './streams.ts';
import type { Subscriptions } from './subscriptions.ts';
import { EMPTY_FILTER, loadViewerFilters, type ViewerFilter } from './viewerFilters.ts';

interface PayloadStatus {
  id: string;
  language?: string | null;
  content?: string;
  spoiler_text?: string;
  account: { id: string; acct: string };
  mentions: { id: string }[];
}
type PayloadWithReblog = PayloadStatus & { reblog?: PayloadStatus | null };

/** One parse per message, however many connections it goes to. */
const parsed = new WeakMap<StreamMessage, PayloadWithReblog | null>();

function parsedStatus(message: StreamMessage): PayloadWithReblog | null {
  let status = parsed.get(message);
  if (status === undefined) {
    try {
      const p = JSON.parse(message.payload) as PayloadWithReblog;
      status = p && typeof p === 'object' && p.account ? { ...p, mentions: p.mentions ?? [] } : null;
      if (status?.reblog) status.reblog = { ...status.reblog, mentions: status.reblog.mentions ?? [] };
    } catch {
      status = null;
    }
    parsed.set(message, status);
  }
  return status;
}

export interface Viewer {
  token: AccessTokenDoc;
  account: CachedAccount | null;
  user: CachedUser | null;
}

/** What a connection emits: a stream message, or an error about a client request. */
export type Frame =
  | {
      stream: string[];
      event: string;
      payload: string;
      /** The frame as WebSocket text (shared by every connection that sends this message unchanged). */
      text?: string;
    }
  | { error: string; status: number };

/** Serialised frames per message and stream label: a fan-out's message is encoded once per label. */
const encoded = new WeakMap<StreamMessage, Map<string, string>>();

function sharedFrame(label: string[], message: StreamMessage): Frame {
  let byLabel = encoded.get(message);
  if (!byLabel) encoded.set(message, (byLabel = new Map()));
  const key = label.join('\u0000');
  let text = byLabel.get(key);
  if (text === undefined) {
    text = JSON.stringify({ stream: label, event: message.event, payload: message.payload });
    byLabel.set(key, text);
  }
  return { stream: label, event: message.event, payload: message.payload, text };
}

export class Connection {
  private readonly core: Core;
  private readonly subscriptions: Subscriptions;
  readonly viewer: Viewer | null;
  private readonly emit: (frame: Frame) => void;
  private readonly streams = new Map<string, Promise<() => Promise<void>>>();
  private filter: ViewerFilter = EMPTY_FILTER;
  private closed = false;

  constructor(core: Core, subscriptions: Subscriptions, viewer: Viewer | null, emit: (frame: Frame) => void) {
    this.core = core;
    this.subscriptions = subscriptions;
    this.viewer = viewer;
    this.emit = emit;
  }

  /** Loads what the viewer does not want to see (the server's sweep refreshes it for all at once). */
  async refreshFilter(): Promise<void> {
    const me = this.viewer?.account?._id;
    if (me === undefined) return;
    this.setFilter((await loadViewerFilters(this.core, [me])).get(me) ?? EMPTY_FILTER);
  }

  setFilter(filter: ViewerFilter): void {
    this.filter = filter;
  }

  private deliver(stream: ResolvedStream, message: StreamMessage): void {
    if (this.closed) return;
    const label = stream.label;
    if (message.event !== 'update' && message.event !== 'status.update') {
      this.emit(sharedFrame(label, message));
      return;
    }
    const status = parsedStatus(message);
    if (!status) return;
    const publicStream = label[0]?.startsWith('public') === true || label[0]?.startsWith('hashtag') === true;
    // Feeds the instance's access settings close to this viewer, wholly or for one origin.
    if (stream.origin !== 'all') {
      const remote = status.account.acct.includes('@');
      if (stream.origin === 'none' || (stream.origin === 'local') === remote) return;
    }
    const f = this.filter;
    // Languages: only public and hashtag streams, and for logged-out viewers too (none chosen then).
    if (publicStream && f.chosenLanguages && !f.chosenLanguages.includes(status.language ?? '')) return;
    const me = this.viewer?.account ? String(this.viewer.account._id) : null;
    if (me === null) {
      this.emit(sharedFrame(label, message));
      return;
    }
    for (const s of [status, status.reblog]) {
      if (!s) continue;
      if (f.hidden.has(s.account.id) || s.mentions.some((m) => f.hidden.has(m.id))) return;
      const domain = s.account.acct.split('@')[1];
      if (domain && f.blockedDomains.has(domain.toLowerCase())) return;
    }
    let payload = message.payload;
    const proper = status.reblog ?? status;
    if (f.filters.length > 0 && proper.account.id !== me) {
      const matches = matchFilters(f.filters, {
        _id: BigInt(proper.id),
        content: proper.content ?? '',
        spoilerText: proper.spoiler_text ?? '',
      });
      const context = publicStream ? 'public' : 'home';
      if (matches.some((m) => m.filter.action === 'hide' && m.filter.context.includes(context))) return;
      if (matches.length > 0)
        payload = JSON.stringify({
          ...(JSON.parse(message.payload) as object),
          filtered: presentFilterResults(matches),
        });
    }
    this.emit(
      payload === message.payload ? sharedFrame(label, message) : { stream: label, event: message.event, payload },
    );
  }

  private error(text: string, status = 400): void {
    if (!this.closed) this.emit({ error: text, status });
  }

  async subscribe(req: StreamRequest): Promise<void> {
    try {
      if (this.viewer && !scopesAllow(this.viewer.token.scopes, scopesFor(req.stream)))
        throw new StreamError('Access token does not have the required scopes');
      const stream = await resolveStream(this.core, this.viewer, req);
      if (this.streams.has(stream.key) || this.closed) return;
      const listening = (async () => {
        const stops = await Promise.all(
          stream.channels.map((c) => this.subscriptions.listen(c, (m) => this.deliver(stream, m))),
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
      const stream = await resolveStream(this.core, this.viewer, req);
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
