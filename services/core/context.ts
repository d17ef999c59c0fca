// The process-wide dependencies every role shares: configuration, logger, MongoDB, Redis, the
// status id generator and the outbox that turns writes into Kafka events.
import type { Db, MongoClient } from 'mongodb';
import type { Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { connectMongo, ensureIndexes, mongoAnswers } from './db/mongo.ts';
import { watchMongoContact, type MongoContact } from './db/mongoContact.ts';
import { installDocCache } from './db/docCache.ts';
import { connectRedis, type Redis } from './db/redis.ts';
import { StatusIdGenerator } from './ids.ts';
import { Outbox, type EventSink } from './events/outbox.ts';
import { ensureVapidKeys, type VapidKeys } from './push/vapid.ts';
import './model/index.ts';

export interface Core {
  config: Config;
  logger: Logger;
  mongo: MongoClient;
  db: Db;
  /** When MongoDB last answered this process: `/health` fails after MONGO_LIVENESS_SECONDS without. */
  mongoContact: MongoContact;
  redis: Redis;
  statusIds: StatusIdGenerator;
  outbox: Outbox;
  /** Web Push keys: configured, or generated once per deployment and stored. */
  vapid: VapidKeys;
  close(): Promise<void>;
}

export interface CoreOptions {
  /** Where events go; the Kafka sink in every real process. */
  sink: EventSink & { close?: () => Promise<void> };
  logger?: Logger;
  /** Outbox relay grace period (tests shorten it). */
  outboxGraceMs?: number;
}

/**
 * How long new connections must reach MongoDB while this process's pings keep failing before its
 * client is connected afresh (db/mongoContact.ts): longer than the driver's 10 s heartbeat, after
 * which a working monitor has found the server again; well within the liveness limit.
 */
const MONGO_RESET_AFTER_MS = 15_000;

export async function createCore(config: Config, opts: CoreOptions): Promise<Core> {
  const logger = opts.logger ?? createLogger(config.logLevel, 'fedisrv');
  const { client, db } = await connectMongo(config.mongoUrl);
  await ensureIndexes(db);
  const redis = connectRedis(config, { namespace: config.redisNamespace });
  installDocCache(db, redis);
  const vapid = await ensureVapidKeys(db, config);
  const outbox = new Outbox(db, opts.sink, logger, opts.outboxGraceMs);
  const mongoContact = watchMongoContact(db, {
    limitMs: config.mongoLivenessSeconds * 1000,
    resetAfterMs: MONGO_RESET_AFTER_MS,
    reachable: () => mongoAnswers(config.mongoUrl),
    async reset() {
      logger.warn(
        { silentMs: mongoContact.silentMs() },
        'MongoDB answers a new connection but not this client: reconnecting it',
      );
      await client.close();
      await client.connect();
    },
  });
  return {
    config,
    logger,
    mongo: client,
    db,
    mongoContact,
    redis,
    statusIds: new StatusIdGenerator(redis),
    outbox,
    vapid,
    async close() {
      await outbox.flush();
      mongoContact.stop();
      await opts.sink.close?.();
      redis.disconnect();
      await client.close();
    },
  };
}
