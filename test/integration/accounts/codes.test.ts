// Authorization codes are single-use even under concurrent exchanges (the claim is a unique insert).
import type { Core } from '../../../services/core/context.ts';
import {
  createAuthorizationCode,
  findAuthorizationCode,
  consumeAuthorizationCode,
} from '../../../services/core/oauth/codes.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

describe('authorization codes', () => {
  let core: Core;
  beforeAll(async () => {
    ({ core } = await createTestCore());
  });
  afterAll(async () => {
    if (core) await closeTestCore(core);
  });

  it('lets exactly one of many concurrent exchanges consume a code', async () => {
    const { user, app } = await createTestUser(core);
    for (let round = 0; round < 5; round++) {
      const code = await createAuthorizationCode(core, {
        appId: app._id,
        userId: user._id,
        redirectUri: 'urn:ietf:wg:oauth:2.0:oob',
        scopes: ['read'],
        codeChallenge: null,
      });
      const doc = await findAuthorizationCode(core, code);
      const results = await Promise.all(Array.from({ length: 8 }, () => consumeAuthorizationCode(core, doc!._id)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await findAuthorizationCode(core, code))!.usedAt).toBeInstanceOf(Date);
    }
  });
});
