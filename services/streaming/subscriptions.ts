// One Redis subscriber connection per streaming process: a channel is subscribed while at least
// one client listens to it and unsubscribed when the last one leaves. Meanwhile its listener key
// (channels.ts) tells the publishers that someone listens; it is left to expire, since another
// process may listen too.
import type { Config } from '../core/config.ts';
import { batch, connectRedis, isCluster, type Redis } from '../core/db/redis.ts';
import {
  channelName,
  LISTENER_REFRESH_MS,
  LISTENER_TTL_SECONDS,
  listenerKey,
  type StreamMessage,
} from '../core/streaming/channels.ts';
import type { Logger } from '../core/logger.ts';
import { traceStage, tracingStages } from '../core/streaming/latencyTrace.ts';

export type Listener = (message: StreamMessage) => void;

/** How many recently received message texts are kept parsed. */
const RECENT_MESSAGES = 64;

export class Subscriptions {
  private readonly redis: Redis;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly config: Config;
  private readonly logger: Logger;
  private readonly recent = new Map<string, StreamMessage>();

  /** For the listener keys (a subscriber connection runs no other commands). */
  private readonly keys: Redis;
  private readonly refresh: NodeJS.Timeout;

  constructor(config: Config, logger: Logger, keys: Redis) {
    this.config = config;
    this.logger = logger;
    this.keys = keys;
    this.redis = connectRedis(config);
    this.refresh = setInterval(() => {
      this.markListened([...this.listeners.keys()].map((c) => this.unprefixed(c))).catch((err: unknown) =>
        this.logger.warn({ err }, 'listener keys not refreshed'),
      );
    }, LISTENER_REFRESH_MS);
    this.refresh.unref();
    this.redis.on('message', (channel: string, raw: string) => {
      const message = this.parse(raw);
      if (!message) {
        this.logger.warn({ channel }, 'unreadable stream message');
        return;
      }
      if (tracingStages) this.traceReceived(message);
      for (const listener of this.listeners.get(channel) ?? []) listener(message);
    });
  }

  /** Listens to a timeline channel (unprefixed name); returns how to stop listening. */
  async listen(name: string, listener: Listener): Promise<() => Promise<void>> {
    const channel = channelName(this.config, name);
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await this.markListened([name]);
      await this.inOrder(() => this.redis.subscribe(channel));
    }
    set.add(listener);
    return async () => {
      const current = this.listeners.get(channel);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) {
        this.listeners.delete(channel);
        await this.inOrder(() => this.redis.unsubscribe(channel)).catch(() => undefined);
      }
    };
  }

  /**
   * A fan-out publishes one message on the channels of many followers: the same text arrives
   * once per channel. The recent ones are kept parsed, so the message (and what connections
   * derive from it) is one object for all of them.
   */
  private parse(raw: string): StreamMessage | null {
    const known = this.recent.get(raw);
    if (known) return known;
    let message: StreamMessage;
    try {
      message = JSON.parse(raw) as StreamMessage;
    } catch {
      return null;
    }
    if (this.recent.size >= RECENT_MESSAGES) this.recent.delete(this.recent.keys().next().value as string);
    this.recent.set(raw, message);
    return message;
  }

  private readonly traced = new WeakSet<StreamMessage>();
  private sentTrace: Map<string, number> | null = null;

  /** With TRACE_STAGES=1: when an update first arrives, and when its last send of a turn is done. */
  private traceReceived(message: StreamMessage): void {
    if (message.event !== 'update') return;
    const id = /"id":"(\d+)"/.exec(message.payload)?.[1];
    if (!id) return;
    if (!this.traced.has(message)) {
      this.traced.add(message);
      traceStage(id, 'stream.received');
    }
    if (!this.sentTrace) {
      const pending = (this.sentTrace = new Map());
      setImmediate(() => {
        this.sentTrace = null;
        for (const [sid, at] of pending) traceStage(sid, 'stream.sent', at);
      });
    }
    // Stamped after the listeners ran (a microtask after this synchronous dispatch).
    const pending = this.sentTrace;
    queueMicrotask(() => pending.set(id, performance.timeOrigin + performance.now()));
  }

  /**
   * On a Redis Cluster, (un)subscriptions are sent one after the other. ioredis's cluster client
   * opens its subscriber connection on the first SUBSCRIBE, and writes a second one issued during
   * that connection's handshake at once (SUBSCRIBE is allowed while Redis loads); the handshake's
   * INFO then fails in subscriber mode and both subscriptions fail. A single Redis has no such
   * window (its connection is made before use) and subscribes concurrently.
   */
  private queue: Promise<unknown> = Promise.resolve();
  private inOrder<T>(send: () => Promise<T>): Promise<T> {
    if (!isCluster(this.redis)) return send();
    const run = this.queue.then(send, send);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async markListened(names: string[]): Promise<void> {
    if (names.length === 0) return;
    const pipe = batch(this.keys);
    for (const name of names) pipe.set(listenerKey(name), '1', 'EX', LISTENER_TTL_SECONDS);
    await pipe.exec();
  }

  private unprefixed(channel: string): string {
    const ns = this.config.redisNamespace;
    return ns ? channel.slice(ns.length + 1) : channel;
  }

  channelCount(): number {
    return this.listeners.size;
  }

  close(): void {
    clearInterval(this.refresh);
    this.redis.disconnect();
  }
}
