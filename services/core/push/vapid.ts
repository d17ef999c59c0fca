// The VAPID key pair that signs Web Push messages and that clients receive as `vapid_key`.
// VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY win; without them a pair is generated once and stored in
// MongoDB, so every process of the deployment uses the same keys (a pair that changed would break
// every existing push subscription).
import webpush from 'web-push';
import type { Db } from 'mongodb';
import type { Config } from '../config.ts';
import { generatedOnce } from '../settings/settings.ts';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

const KEY = 'vapid_keys';

export async function ensureVapidKeys(db: Db, config: Config): Promise<VapidKeys> {
  const { publicKey, privateKey } = config.vapid;
  if (publicKey && privateKey) return { publicKey, privateKey };
  return generatedOnce(db, KEY, isVapidKeys, () => webpush.generateVAPIDKeys());
}

function isVapidKeys(value: unknown): value is VapidKeys {
  const v = value as Partial<VapidKeys> | null | undefined;
  return typeof v?.publicKey === 'string' && typeof v.privateKey === 'string';
}
