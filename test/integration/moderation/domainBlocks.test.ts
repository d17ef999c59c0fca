// Instance domain blocks and allows on the real database: conflicts, subdomain coverage, the
// per-process cache dropped on change, limited-federation mode, and the action log.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { adminActions } from '../../../services/core/model/adminActions.ts';
import {
  createDomainBlock,
  updateDomainBlock,
  deleteDomainBlock,
  findDomainBlock,
  domainPolicy,
} from '../../../services/core/moderation/domainBlocks.ts';
import { createDomainAllow, deleteDomainAllow } from '../../../services/core/moderation/domainAllows.ts';
import { ApiError } from '../../../services/core/errors.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('instance domain blocks', () => {
  let core: Core;
  let limitedCore: Core;
  beforeAll(async () => {
    core = (await createTestCore()).core;
    limitedCore = (await createTestCore(testConfig({ LIMITED_FEDERATION_MODE: 'true' }))).core;
  });
  afterAll(async () => {
    await closeTestCore(core);
    await closeTestCore(limitedCore);
  });

  it('normalises, covers subdomains and picks the most specific rule', async () => {
    const block = await createDomainBlock(core, { domain: 'Spam.Example.', severity: 'silence' }, null);
    expect(block.domain).toBe('spam.example');
    expect((await findDomainBlock(core, 'spam.example'))?._id).toBe(block._id);
    expect((await findDomainBlock(core, 'a.b.SPAM.example'))?._id).toBe(block._id);
    expect(await findDomainBlock(core, 'notspam.example')).toBeNull();
    expect(await findDomainBlock(core, null)).toBeNull();

    const stricter = await createDomainBlock(core, { domain: 'worse.spam.example', severity: 'suspend' }, null);
    expect((await findDomainBlock(core, 'x.worse.spam.example'))?._id).toBe(stricter._id);
    expect((await domainPolicy(core, 'x.worse.spam.example')).rejected).toBe(true);
    const silenced = await domainPolicy(core, 'other.spam.example');
    expect(silenced).toMatchObject({ rejected: false, silenced: true, rejectMedia: false });
  });

  it('refuses a duplicate or a laxer block under an existing one with existing_domain_block', async () => {
    const dup = await rejection(createDomainBlock(core, { domain: 'spam.example', severity: 'suspend' }, null));
    expect(dup.statusCode).toBe(422);
    expect(dup.body.existing_domain_block).toMatchObject({ domain: 'spam.example', severity: 'silence' });
    const laxer = await rejection(createDomainBlock(core, { domain: 'sub.spam.example', severity: 'noop' }, null));
    expect(laxer.statusCode).toBe(422);
    const invalid = await rejection(createDomainBlock(core, { domain: 'not a domain' }, null));
    expect(invalid.body.error).toBe('Validation failed: Domain is not a valid domain name');
    const blank = await rejection(createDomainBlock(core, { domain: '' }, null));
    expect(blank.body.error).toBe("Validation failed: Domain can't be blank");
    const badSeverity = await rejection(createDomainBlock(core, { domain: 'x.example', severity: 'nuke' }, null));
    expect(badSeverity.body.error).toBe('Validation failed: Severity is not included in the list');
  });

  it('sees its own changes at once and logs them', async () => {
    const block = await createDomainBlock(core, { domain: 'media.example', severity: 'noop', rejectMedia: true }, 7n);
    expect((await domainPolicy(core, 'media.example')).rejectMedia).toBe(true);
    await updateDomainBlock(core, block._id, { severity: 'suspend' }, 7n);
    expect((await domainPolicy(core, 'cdn.media.example')).rejected).toBe(true);
    await deleteDomainBlock(core, block._id, 7n);
    expect(await findDomainBlock(core, 'media.example')).toBeNull();
    const log = await collection(core.db, adminActions)
      .find({ targetType: 'DomainBlock', targetId: String(block._id) })
      .sort({ _id: 1 })
      .toArray();
    expect(log.map((l) => l.action)).toEqual(['create', 'update', 'destroy']);
    expect(log[0].accountId).toBe(7n);
  });

  it('allows only listed domains (and their subdomains) in limited-federation mode', async () => {
    expect((await domainPolicy(limitedCore, 'friend.example')).rejected).toBe(true);
    const allow = await createDomainAllow(limitedCore, 'Friend.Example');
    expect((await createDomainAllow(limitedCore, 'friend.example'))._id).toBe(allow._id);
    expect((await domainPolicy(limitedCore, 'friend.example')).rejected).toBe(false);
    expect((await domainPolicy(limitedCore, 'social.friend.example')).rejected).toBe(false);
    expect((await domainPolicy(limitedCore, null)).rejected).toBe(false);
    await deleteDomainAllow(limitedCore, allow._id);
    expect((await domainPolicy(limitedCore, 'friend.example')).rejected).toBe(true);
    // Without limited federation an unknown domain is open.
    expect((await domainPolicy(core, 'friend.example')).rejected).toBe(false);
  });
});
