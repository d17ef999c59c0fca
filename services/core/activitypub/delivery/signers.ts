// The key each delivery job is signed with: the acting local account's, or the instance actor's.
// Keys are parsed once per process (keys.ts caches the KeyObjects); the account lookup behind a
// signer id is cached briefly, so a status to 2,000 inboxes reads its author once.
import type { Core } from '../../context.ts';
import { collection } from '../../db/mongo.ts';
import { accounts } from '../../model/accounts.ts';
import { accountSigningKey, instanceSigningKey, type SigningKey } from '../keys.ts';
import { TtlCache } from '../../cache/ttlCache.ts';

const TTL_MS = 60_000;

export class SignerCache {
  private readonly entries = new TtlCache<string, Promise<SigningKey>>(TTL_MS, 10_000);
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  /** The signing key of a local account (by id), or of the instance actor (null). */
  keyFor(signerAccountId: string | null): Promise<SigningKey> {
    const id = signerAccountId ?? 'instance';
    const hit = this.entries.get(id);
    if (hit) return hit;
    const key = signerAccountId === null ? instanceSigningKey(this.core) : this.load(BigInt(signerAccountId));
    key.catch(() => this.entries.delete(id));
    this.entries.set(id, key);
    return key;
  }

  private async load(id: bigint): Promise<SigningKey> {
    const account = await collection(this.core.db, accounts).findOne({ _id: id, domain: null });
    // A deleted local account still signs its own Delete: its key stays on the record.
    if (!account) throw new SignerMissingError(String(id));
    return accountSigningKey(this.core, account);
  }
}

export class SignerMissingError extends Error {
  constructor(id: string) {
    super(`local account ${id} (signer) not found`);
  }
}
