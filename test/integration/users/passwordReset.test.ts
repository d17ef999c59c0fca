// Password reset links on the real servers: a link works exactly once even when it is submitted
// many times at once, the mail names the link, and using it ends every session and token.
import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { requestPasswordReset, resetPassword } from '../../../services/core/users/passwordReset.ts';
import { createWebSession, webSessionUser } from '../../../services/core/oauth/sessions.ts';
import { resolveToken } from '../../../services/core/auth/resolveToken.ts';
import { closeTestCore, createTestCore, eventually } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';

describe('password reset', () => {
  let core: Core;
  let published: OutboxEvent[];
  beforeAll(async () => {
    ({ core, published } = await createTestCore());
  });
  afterAll(async () => {
    if (core) await closeTestCore(core);
  });

  async function mailedToken(to: string, skip: number): Promise<string> {
    const mail = await eventually(
      async () =>
        published.filter(
          (e) =>
            e.type === 'MailRequested' && e.payload.to === to && e.payload.template === 'reset_password_instructions',
        )[skip],
      20_000,
      `reset mail ${skip + 1} to ${to}`,
    );
    const m = /reset_password_token=([\w%-]+)/.exec(String(mail.payload.text));
    return decodeURIComponent(m![1]);
  }

  it('lets exactly one of many concurrent submissions of a link set the password', async () => {
    const { user } = await createTestUser(core, { email: 'race@example.test' });
    for (let round = 0; round < 3; round++) {
      await requestPasswordReset(core, 'race@example.test');
      const token = await mailedToken('race@example.test', round);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => resetPassword(core, token, `new password ${round} ${i}`)),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'invalid')).toBe(true);
    }
    expect(user._id).toBeDefined();
  });

  it('ends every web session and revokes every access token of the user', async () => {
    const { user, token } = await createTestUser(core, { email: 'ends@example.test' });
    const sessions = [await createWebSession(core, user._id), await createWebSession(core, user._id)];
    expect(await resolveToken(core, token)).not.toBeNull();
    await requestPasswordReset(core, 'ends@example.test');
    const result = await resetPassword(core, await mailedToken('ends@example.test', 0), 'a different password');
    expect(result.ok).toBe(true);
    for (const s of sessions) expect(await webSessionUser(core, s)).toBeNull();
    await expect(resolveToken(core, token)).rejects.toMatchObject({ statusCode: 401 });
  });

  it('mails nothing for an unknown address and refuses a short password without using the link', async () => {
    await requestPasswordReset(core, 'nobody@example.test');
    await createTestUser(core, { email: 'short@example.test' });
    await requestPasswordReset(core, 'short@example.test');
    const token = await mailedToken('short@example.test', 0);
    expect(published.some((e) => e.type === 'MailRequested' && e.payload.to === 'nobody@example.test')).toBe(false);
    expect(await resetPassword(core, token, 'short')).toMatchObject({ ok: false, reason: 'password' });
    expect(await resetPassword(core, token, 'long enough now')).toMatchObject({ ok: true });
  });
});
