// Web Push subscriptions of access tokens (POST/GET/PUT/DELETE /api/v1/push/subscription): input
// validation (a usable endpoint URL, a P-256 public key and a 16-byte auth secret, else 422) and
// the one-subscription-per-token rule.
import { createECDH } from 'node:crypto';
import { isIP } from 'node:net';
import type { Core } from '../context.ts';
import { nextSerialId, type Id } from '../ids.ts';
import { collection, isDuplicateKeyError } from '../db/mongo.ts';
import { validationFailed } from '../errors.ts';
import { AddressPolicy } from '../net/addressPolicy.ts';
import {
  PUSH_ALERT_TYPES,
  PUSH_POLICIES,
  pushSubscriptions,
  type PushPolicy,
  type PushSubscriptionDoc,
} from '../model/pushSubscriptions.ts';

export interface PushDataInput {
  alerts?: Record<string, unknown>;
  policy?: unknown;
}

export interface NewPushSubscription {
  endpoint: unknown;
  p256dh: unknown;
  auth: unknown;
  standard?: unknown;
  data?: PushDataInput;
}

const MAX_ENDPOINT = 2048;

function truthy(v: unknown): boolean {
  return v === true || (typeof v === 'string' && /^(1|t|true|on|yes)$/i.test(v)) || v === 1;
}

function base64url(raw: string): Buffer | null {
  if (!/^[A-Za-z0-9_\-+/]+={0,2}$/.test(raw)) return null;
  return Buffer.from(raw.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url');
}

/** A P-256 public key the encryption can use (65-byte uncompressed point on the curve). */
function validP256dh(raw: unknown): raw is string {
  if (typeof raw !== 'string' || raw.length > 200) return false;
  const key = base64url(raw);
  if (!key || key.length !== 65 || key[0] !== 4) return false;
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    ecdh.computeSecret(key); // throws for a point that is not on the curve
    return true;
  } catch {
    return false;
  }
}

function validAuth(raw: unknown): raw is string {
  if (typeof raw !== 'string' || raw.length > 100) return false;
  return base64url(raw)?.length === 16;
}

function policyOf(core: Core): AddressPolicy {
  return new AddressPolicy(core.config.federation.allowedPrivateAddresses);
}

/** The endpoint as a URL, or a 422: http(s), no credentials, not a literal refused address. */
function validEndpoint(core: Core, raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_ENDPOINT)
    throw validationFailed('Endpoint is invalid');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationFailed('Endpoint is invalid');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || !url.hostname)
    throw validationFailed('Endpoint is invalid');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host) ? host : /^localhost\.?$/i.test(host) ? '127.0.0.1' : null;
  if (literal !== null && !policyOf(core).permits(literal)) throw validationFailed('Endpoint is a private address');
  // Stored and returned exactly as sent (Mastodon does not normalise it; clients compare it).
  return raw;
}

function alertsOf(raw: unknown): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  if (raw === undefined || raw === null || raw === '') return out;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw validationFailed('Alerts must be an object');
  for (const t of PUSH_ALERT_TYPES) {
    const v = (raw as Record<string, unknown>)[t];
    if (v !== undefined) out[t] = truthy(v);
  }
  return out;
}

function policyValue(raw: unknown): PushPolicy {
  if (raw === undefined || raw === null || raw === '') return 'all';
  if (typeof raw !== 'string' || !PUSH_POLICIES.includes(raw as PushPolicy))
    throw validationFailed('Policy is not included in the list');
  return raw as PushPolicy;
}

/**
 * Creates the token's subscription, replacing the one it had (Mastodon destroys the old one first).
 */
export async function subscribe(
  core: Core,
  owner: { tokenId: Id; userId: Id; accountId: Id },
  input: NewPushSubscription,
): Promise<PushSubscriptionDoc> {
  const endpoint = validEndpoint(core, input.endpoint);
  if (!validP256dh(input.p256dh)) throw validationFailed('Key p256dh is invalid');
  if (!validAuth(input.auth)) throw validationFailed('Key auth is invalid');
  const now = new Date();
  const doc: PushSubscriptionDoc = {
    _id: await nextSerialId(core.db, 'web_push_subscriptions'),
    accessTokenId: owner.tokenId,
    userId: owner.userId,
    accountId: owner.accountId,
    endpoint,
    keyP256dh: input.p256dh,
    keyAuth: input.auth,
    standard: truthy(input.standard),
    alerts: alertsOf(input.data?.alerts),
    policy: policyValue(input.data?.policy),
    createdAt: now,
    updatedAt: now,
  };
  const coll = collection(core.db, pushSubscriptions);
  for (let attempt = 0; ; attempt++) {
    await coll.deleteMany({ accessTokenId: owner.tokenId });
    try {
      await coll.insertOne(doc);
      return doc;
    } catch (err) {
      // A concurrent subscribe of the same token inserted between our delete and insert: replace it.
      if (!isDuplicateKeyError(err) || attempt >= 3) throw err;
    }
  }
}

export function subscriptionOfToken(core: Core, tokenId: Id): Promise<PushSubscriptionDoc | null> {
  return collection(core.db, pushSubscriptions).findOne({ accessTokenId: tokenId });
}

/** PUT: replaces alerts and policy (Mastodon replaces the whole `data`). */
export async function updateSubscription(
  core: Core,
  sub: PushSubscriptionDoc,
  data: PushDataInput | undefined,
): Promise<PushSubscriptionDoc> {
  const alerts = alertsOf(data?.alerts);
  const policy = policyValue(data?.policy);
  const updatedAt = new Date();
  await collection(core.db, pushSubscriptions).updateOne({ _id: sub._id }, { $set: { alerts, policy, updatedAt } });
  return { ...sub, alerts, policy, updatedAt };
}

export async function unsubscribeToken(core: Core, tokenId: Id): Promise<void> {
  await collection(core.db, pushSubscriptions).deleteMany({ accessTokenId: tokenId });
}

/** Revoked tokens lose their subscriptions (called by every path that revokes tokens). */
export async function unsubscribeTokens(core: Core, tokenIds: Id[]): Promise<void> {
  if (tokenIds.length === 0) return;
  await collection(core.db, pushSubscriptions).deleteMany({ accessTokenId: { $in: tokenIds } });
}

/** The WebPushSubscription entity. */
export function presentSubscription(core: Core, sub: PushSubscriptionDoc) {
  const alerts: Record<string, boolean> = {};
  for (const t of PUSH_ALERT_TYPES) alerts[t] = sub.alerts[t] === true;
  return {
    id: String(sub._id),
    endpoint: sub.endpoint,
    standard: sub.standard,
    alerts,
    policy: sub.policy,
    server_key: core.vapid.publicKey,
  };
}
