// The VAPID key pair that signs Web Push messages and that clients receive as `vapid_key`.
// VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY win; without them a pair is generated once and stored in
// MongoDB, so every process of the deployment uses the same keys (a pair that changed would break
// every existing push subscription).
import webpush from 'web-push';
import type { Db } from 'mongodb';
import type { Config } from '../config.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { settings } from '../model/settings.ts';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

const KEY = 'vapid_keys';

export async function ensureVapidKeys(db: Db, config: Config): Promise<VapidKeys> {
  const { publicKey, privateKey } = config.vapid;
  if (publicKey && privateKey) return { publicKey, privateKey };
  const coll = collection(db, settings);
  const stored = await coll.findOne({ _id: KEY });
  if (isVapidKeys(stored?.value)) return stored.value;
  const generated = webpush.generateVAPIDKeys();
  try {
    await coll.insertOne({ _id: KEY, value: { ...generated }, updatedAt: new Date() });
    return generated;
  } catch (err) {
    // Another process generated them first: use theirs.
    if (!isDuplicateKeyError(err)) throw err;
    const winner = await coll.findOne({ _id: KEY });
    if (!isVapidKeys(winner?.value)) throw err;
    return winner.value;
  }
}

function isVapidKeys(value: unknown): value is VapidKeys {
  const v = value as Partial<VapidKeys> | null | undefined;
  return typeof v?.publicKey === 'string' && typeof v.privateKey === 'string';
}
