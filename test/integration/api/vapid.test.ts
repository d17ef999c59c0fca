// One VAPID key pair per deployment: configured keys win; otherwise the first process generates a
// pair, stores it, and every other process (and restart) uses the same.
import { testConfig } from '../../support/config.ts';
import { createTestCore, closeTestCore } from '../../support/core.ts';
import { createTestApp, startTestServer } from '../../support/fixtures.ts';
import { ensureVapidKeys } from '../../../services/core/push/vapid.ts';
import { generatedOnce } from '../../../services/core/settings/settings.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { settings } from '../../../services/core/model/settings.ts';

it('generates a key pair once and shares it across processes of one database', async () => {
  const { core } = await createTestCore();
  try {
    expect(core.vapid.publicKey).toMatch(/^[A-Za-z0-9_-]{80,90}$/); // uncompressed P-256 point, base64url
    const again = await Promise.all([1, 2, 3].map(() => ensureVapidKeys(core.db, core.config)));
    for (const keys of again) expect(keys).toEqual(core.vapid);

    const server = await startTestServer(core);
    try {
      const app = await createTestApp(core);
      const verify = await fetch(`${server.url}/api/v1/apps/verify_credentials`, {
        headers: { authorization: `Bearer ${app.token}` },
      });
      expect(((await verify.json()) as { vapid_key: string }).vapid_key).toBe(core.vapid.publicKey);
      const instance = (await (await fetch(`${server.url}/api/v2/instance`)).json()) as {
        configuration: { vapid: { public_key: string } };
      };
      expect(instance.configuration.vapid.public_key).toBe(core.vapid.publicKey);
    } finally {
      await server.close();
    }
  } finally {
    await closeTestCore(core);
  }
});

it('uses VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY when configured', async () => {
  const { core } = await createTestCore(
    testConfig({ VAPID_PUBLIC_KEY: 'configured-public', VAPID_PRIVATE_KEY: 'configured-private' }),
  );
  try {
    expect(core.vapid).toEqual({ publicKey: 'configured-public', privateKey: 'configured-private' });
  } finally {
    await closeTestCore(core);
  }
});

it('a generated setting: of processes generating it at once, the first stored wins for all', async () => {
  const { core } = await createTestCore();
  try {
    const isPair = (v: unknown): v is { n: string } => typeof (v as { n?: unknown } | null)?.n === 'string';
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((n) => generatedOnce(core.db, 'test_generated_once', isPair, () => ({ n }))),
    );
    const stored = await collection(core.db, settings).findOne({ _id: 'test_generated_once' });
    expect(isPair(stored?.value)).toBe(true);
    for (const r of results) expect(r).toEqual(stored?.value);
  } finally {
    await collection(core.db, settings).deleteOne({ _id: 'test_generated_once' });
    await closeTestCore(core);
  }
});
