// The signed token of unsubscribe links: made for one user and the purpose "unsubscribe", valid
// for a month (Rails' SignedGlobalID lifetime), refused when altered. The user lookup is not
// reached for a refused token (the core has no database here).
import type { Core } from '../../../services/core/context.ts';
import { unsubscribeToken, unsubscribingUser } from '../../../services/core/users/unsubscribe.ts';

const DAY = 24 * 3600_000;
const core = { config: { secretKeyBase: 'x'.repeat(64) } } as unknown as Core;
const found = { _id: 7n };
const withUsers = {
  config: core.config,
  db: { collection: () => ({ findOne: async (q: { _id: bigint }) => (q._id === 7n ? found : null) }) },
} as unknown as Core;

test('a fresh token names its user', async () => {
  await expect(unsubscribingUser(withUsers, unsubscribeToken(core, 7n))).resolves.toBe(found);
});

test('a token is refused after 30 days', async () => {
  const made = Date.now() - 31 * DAY;
  await expect(unsubscribingUser(core, unsubscribeToken(core, 7n, made))).resolves.toBeNull();
  await expect(unsubscribingUser(withUsers, unsubscribeToken(core, 7n, Date.now() - 29 * DAY))).resolves.toBe(found);
});

test('an altered or foreign token is refused', async () => {
  const token = unsubscribeToken(core, 7n);
  const [payload, signature] = token.split('--');
  const other = Buffer.from(Buffer.from(payload, 'base64url').toString().replace(/^7\./, '8.')).toString('base64url');
  await expect(unsubscribingUser(core, `${other}--${signature}`)).resolves.toBeNull();
  const otherSecret = { config: { secretKeyBase: 'y'.repeat(64) } } as unknown as Core;
  await expect(unsubscribingUser(core, unsubscribeToken(otherSecret, 7n))).resolves.toBeNull();
  await expect(unsubscribingUser(core, 'garbage')).resolves.toBeNull();
});
