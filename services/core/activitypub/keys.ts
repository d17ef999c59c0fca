// Signing keys: each local account's RSA-2048 pair (made at sign-up, stored on the account; an
// account without one gets it here, lazily) and the instance actor's pair (generated once per
// deployment, stored in `settings`, like the VAPID keys). Parsed KeyObjects are cached per process:
// parsing a PEM costs more than the RSA signature itself.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { accounts, type AccountDoc } from '../model/accounts.ts';
import { generatedOnce } from '../settings/settings.ts';
import { generateActorKeyPair } from '../accounts/keys.ts';
import { instanceActorUri, keyIdOf } from './uris.ts';

export interface SigningKey {
  /** Public key id, `<actor>#main-key`. */
  keyId: string;
  privateKey: KeyObject;
}

export interface KeyPairPem {
  publicKeyPem: string;
  privateKeyPem: string;
}

/** Small LRU of parsed keys, keyed by the PEM text. */
class KeyCache {
  private readonly map = new Map<string, KeyObject>();
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  get(pem: string, parse: (pem: string) => KeyObject): KeyObject {
    const hit = this.map.get(pem);
    if (hit) {
      this.map.delete(pem);
      this.map.set(pem, hit);
      return hit;
    }
    const key = parse(pem);
    this.map.set(pem, key);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
    return key;
  }
}

const privateKeys = new KeyCache(2_000);
const publicKeys = new KeyCache(10_000);

export function privateKeyObject(pem: string): KeyObject {
  return privateKeys.get(pem, (p) => createPrivateKey(p));
}

/** Parsed public key; throws on a malformed PEM (callers treat that as "no key"). */
export function publicKeyObject(pem: string): KeyObject {
  return publicKeys.get(pem, (p) => createPublicKey(p));
}

/** The account's key pair, generating and storing one when the account has none yet. */
export async function ensureAccountKeys(core: Core, account: AccountDoc): Promise<KeyPairPem> {
  if (account.privateKeyPem && account.publicKeyPem) {
    return { publicKeyPem: account.publicKeyPem, privateKeyPem: account.privateKeyPem };
  }
  if (account.domain !== null) throw new Error('remote accounts have no private key here');
  const generated = await generateActorKeyPair();
  // Only fill an empty slot: a concurrent caller's pair, once written, wins.
  await collection(core.db, accounts).updateOne(
    { _id: account._id, $or: [{ privateKeyPem: null }, { privateKeyPem: '' }, { privateKeyPem: { $exists: false } }] },
    { $set: { ...generated, updatedAt: new Date() } },
  );
  const stored = await collection(core.db, accounts).findOne(
    { _id: account._id },
    { projection: { publicKeyPem: 1, privateKeyPem: 1 } },
  );
  if (!stored?.privateKeyPem || !stored.publicKeyPem) throw new Error(`account ${account._id} has no key pair`);
  account.publicKeyPem = stored.publicKeyPem;
  account.privateKeyPem = stored.privateKeyPem;
  return { publicKeyPem: stored.publicKeyPem, privateKeyPem: stored.privateKeyPem };
}

/** The key a local account signs with. */
export async function accountSigningKey(core: Core, account: AccountDoc): Promise<SigningKey> {
  const pair = await ensureAccountKeys(core, account);
  return { keyId: keyIdOf(account.uri), privateKey: privateKeyObject(pair.privateKeyPem) };
}

const INSTANCE_KEYS = 'instance_actor_keys';
const instanceKeysByDb = new WeakMap<object, Promise<KeyPairPem>>();

function isKeyPair(value: unknown): value is KeyPairPem {
  const v = value as Partial<KeyPairPem> | null | undefined;
  return typeof v?.publicKeyPem === 'string' && typeof v.privateKeyPem === 'string';
}

async function loadInstanceKeys(core: Core): Promise<KeyPairPem> {
  return generatedOnce(core.db, INSTANCE_KEYS, isKeyPair, generateActorKeyPair);
}

/** The instance actor's key pair (generated once per deployment). */
export function instanceActorKeys(core: Core): Promise<KeyPairPem> {
  let pending = instanceKeysByDb.get(core.db);
  if (!pending) {
    pending = loadInstanceKeys(core);
    pending.catch(() => instanceKeysByDb.delete(core.db));
    instanceKeysByDb.set(core.db, pending);
  }
  return pending;
}

/** The key the instance actor signs with: fetches that belong to nobody. */
export async function instanceSigningKey(core: Core): Promise<SigningKey> {
  const pair = await instanceActorKeys(core);
  return { keyId: keyIdOf(instanceActorUri(core.config)), privateKey: privateKeyObject(pair.privateKeyPem) };
}
