// The admin API over real HTTP with the notifications pipeline: account filters and actions (with
// strikes, moderation_warning notifications and the role hierarchy), approval-required sign-ups
// from IP rules with admin.sign_up, e-mail domain blocks with MX variants, canonical e-mail blocks
// at sign-up and at e-mail change, IP blocks, domain blocks and allows, dashboard metrics.
import type { Core } from '../../../services/core/context.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { notifications } from '../../../services/core/model/notifications.ts';
import { accountWarnings } from '../../../services/core/model/reports.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { adminActions } from '../../../services/core/model/adminActions.ts';
import { setMxResolver } from '../../../services/core/moderation/emailBlocks.ts';
import { removeStatusesByModerator } from '../../../services/core/moderation/accountActions.ts';
import { runNotificationsPipeline } from '../../../pipelines/notifications/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestApp, createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';

jest.setTimeout(180_000);

const ADMIN = ['read', 'write', 'admin:read', 'admin:write'];
let api: TestApi;
let core: Core;
let pipeline: Pipeline;
let owner: TestUser, admin: TestUser, moderator: TestUser, target: TestUser;
let appToken: string;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);
const ids = (list: { id: string }[]) => list.map((x) => x.id);

let signUps = 0;
async function signUp(email: string, ip = '198.51.100.7') {
  signUps++;
  return call(
    'POST',
    '/api/v1/accounts',
    appToken,
    { username: `newcomer${signUps}`, email, password: 'a long password', agreement: true, locale: 'en' },
    { 'x-forwarded-for': ip },
  );
}

beforeAll(async () => {
  api = await startTestApi();
  core = api.core;
  pipeline = await runNotificationsPipeline(core, consumerTuning);
  owner = await createTestUser(core, { role: 'Owner', scopes: ADMIN });
  admin = await createTestUser(core, { role: 'Admin', scopes: ADMIN });
  moderator = await createTestUser(core, { role: 'Moderator', scopes: ADMIN });
  target = await createTestUser(core);
  appToken = (await createTestApp(core, { scopes: ['read', 'write', 'follow', 'push'] })).token;
  setMxResolver(async (domain) => (domain === 'blocked.test' || domain === 'alias.test' ? ['mx1.spamhost.test.'] : []));
});

afterAll(async () => {
  setMxResolver(null);
  await pipeline?.stop();
  await api?.close();
});

test('account lists filter as Mastodon v1 and v2 do', async () => {
  const all = await call('GET', '/api/v1/admin/accounts', admin.token);
  expect(all.status).toBe(200);
  expect(ids(all.body)).toEqual(expect.arrayContaining([String(target.account._id), String(owner.account._id)]));
  expect(all.body.find((a: { id: string }) => a.id === String(target.account._id))).toMatchObject({
    username: target.account.username,
    domain: null,
    email: target.user.email,
    confirmed: true,
    approved: true,
    disabled: false,
    silenced: false,
    suspended: false,
    sensitized: false,
    role: { id: '-99' },
    account: { id: String(target.account._id) },
  });
  const staff = await call('GET', '/api/v2/admin/accounts?permissions=staff', admin.token);
  expect(ids(staff.body).sort()).toEqual([owner, admin, moderator].map((u) => String(u.account._id)).sort());
  const byName = await call('GET', `/api/v2/admin/accounts?username=${target.account.username}`, admin.token);
  expect(ids(byName.body)).toEqual([String(target.account._id)]);
  const byEmail = await call(
    'GET',
    `/api/v1/admin/accounts?email=${encodeURIComponent(target.user.email)}`,
    admin.token,
  );
  expect(ids(byEmail.body)).toEqual([String(target.account._id)]);
  const paged = await call('GET', '/api/v1/admin/accounts?limit=2', admin.token);
  expect(paged.body).toHaveLength(2);
  expect(paged.headers.get('link')).toContain('max_id=');
  expect((await call('GET', '/api/v1/admin/accounts/99999999', admin.token)).status).toBe(404);
});

test('actions limit the account, leave strikes the owner is told about, and respect rank', async () => {
  const t = String(target.account._id);
  const bad = await call('POST', `/api/v1/admin/accounts/${t}/action`, moderator.token, { type: 'obliterate' });
  expect(bad.status).toBe(422);
  // A moderator cannot act on an administrator.
  const upward = await call('POST', `/api/v1/admin/accounts/${admin.account._id}/action`, moderator.token, {
    type: 'silence',
  });
  expect(upward.status).toBe(403);

  // A report on the target is resolved by the action taken on it.
  const report = await call('POST', '/api/v1/reports', owner.token, { account_id: t, comment: 'rude' });
  const silenced = await call('POST', `/api/v1/admin/accounts/${t}/action`, moderator.token, {
    type: 'silence',
    text: 'Please be kind',
    report_id: report.body.id,
  });
  expect(silenced.status).toBe(200);
  expect(silenced.body).toEqual({});
  const shown = await call('GET', `/api/v1/admin/accounts/${t}`, moderator.token);
  expect(shown.body).toMatchObject({ silenced: true, account: { limited: true } });
  expect((await call('GET', `/api/v1/admin/reports/${report.body.id}`, moderator.token)).body.action_taken).toBe(true);
  expect(ids((await call('GET', '/api/v1/admin/accounts?silenced=true', moderator.token)).body)).toEqual([t]);

  // The strike reaches its owner as a moderation_warning notification.
  await eventually(
    async () =>
      (await collection(core.db, notifications).countDocuments({
        accountId: target.account._id,
        type: 'moderation_warning',
      })) === 1,
    30_000,
    'moderation_warning',
  );
  const warned = await call('GET', '/api/v1/notifications?types[]=moderation_warning', target.token);
  expect(warned.body[0]).toMatchObject({
    type: 'moderation_warning',
    account: { id: t },
    moderation_warning: { action: 'silence', text: 'Please be kind', target_account: { id: t } },
  });

  expect((await call('POST', `/api/v1/admin/accounts/${t}/unsilence`, moderator.token)).body.silenced).toBe(false);
  await call('POST', `/api/v1/admin/accounts/${t}/action`, moderator.token, { type: 'sensitive' });
  expect((await call('GET', `/api/v1/admin/accounts/${t}`, moderator.token)).body.sensitized).toBe(true);
  expect((await call('POST', `/api/v1/admin/accounts/${t}/unsensitive`, moderator.token)).body.sensitized).toBe(false);

  // disable: the login stops working but the account stays visible.
  await call('POST', `/api/v1/admin/accounts/${t}/action`, moderator.token, { type: 'disable' });
  expect((await call('GET', '/api/v1/accounts/verify_credentials', target.token)).status).toBe(403);
  expect((await call('GET', `/api/v1/accounts/${t}`, owner.token)).status).toBe(200);
  expect((await call('POST', `/api/v1/admin/accounts/${t}/enable`, moderator.token)).body.disabled).toBe(false);
  expect((await call('GET', '/api/v1/accounts/verify_credentials', target.token)).status).toBe(200);

  // Data deletion only for suspended accounts, and only with the delete-user-data permission.
  expect((await call('DELETE', `/api/v1/admin/accounts/${t}`, admin.token)).status).toBe(403);
  await call('POST', `/api/v1/admin/accounts/${t}/action`, admin.token, { type: 'suspend' });
  expect((await call('DELETE', `/api/v1/admin/accounts/${t}`, moderator.token)).status).toBe(403);
  const deleted = await call('DELETE', `/api/v1/admin/accounts/${t}`, admin.token);
  expect(deleted.status).toBe(200);
  expect(deleted.body).toEqual({});
  expect((await call('GET', `/api/v1/admin/accounts/${t}`, admin.token)).body).toMatchObject({ suspended: true });
  const strikes = await collection(core.db, accountWarnings).find({ targetAccountId: target.account._id }).toArray();
  expect(strikes.map((s) => s.action)).toEqual(['silence', 'sensitive', 'disable', 'suspend']);
  const log = await collection(core.db, adminActions).find({ targetType: 'Account', targetId: t }).toArray();
  expect(log.map((l) => l.action)).toEqual(
    expect.arrayContaining(['silence', 'unsilence', 'sensitive', 'unsensitive', 'suspend', 'destroy']),
  );
});

test('a moderator removing a status leaves a delete_statuses strike and a moderation_warning', async () => {
  const author = await createTestUser(core);
  const post = await call('POST', '/api/v1/statuses', author.token, { status: 'against the rules' });
  const [strike] = await removeStatusesByModerator(core, [BigInt(post.body.id)], moderator.account._id, {
    text: 'Removed',
  });
  expect(strike).toMatchObject({ action: 'delete_statuses', statusIds: [BigInt(post.body.id)] });
  expect((await call('GET', `/api/v1/statuses/${post.body.id}`, author.token)).status).toBe(404);
  await eventually(
    async () => (await call('GET', '/api/v1/notifications', author.token)).body.length === 1,
    30_000,
    'moderation_warning for the removal',
  );
  const [n] = (await call('GET', '/api/v1/notifications', author.token)).body;
  expect(n).toMatchObject({
    type: 'moderation_warning',
    moderation_warning: { action: 'delete_statuses', status_ids: [post.body.id], text: 'Removed' },
  });
});

test('IP rules: approval queue with admin.sign_up, refusal, expiry; approve and reject', async () => {
  const rule = await call('POST', '/api/v1/admin/ip_blocks', admin.token, {
    ip: '203.0.113.77/24',
    severity: 'sign_up_requires_approval',
    comment: 'noisy range',
  });
  expect(rule.status).toBe(200);
  expect(rule.body).toMatchObject({ ip: '203.0.113.0/24', severity: 'sign_up_requires_approval', expires_at: null });
  const dup = await call('POST', '/api/v1/admin/ip_blocks', admin.token, {
    ip: '203.0.113.0/24',
    severity: 'no_access',
  });
  expect(dup.status).toBe(422);
  expect((await call('POST', '/api/v1/admin/ip_blocks', admin.token, { ip: '203.0.113.0/24' })).status).toBe(422);
  expect(
    (await call('POST', '/api/v1/admin/ip_blocks', admin.token, { ip: 'nonsense', severity: 'no_access' })).status,
  ).toBe(422);

  const pending = await signUp('pending@example.test', '203.0.113.9');
  expect(pending.status).toBe(200);
  const pendingAccount = await collection(core.db, accounts).findOne({ usernameLower: `newcomer${signUps}` });
  const p = String(pendingAccount!._id);
  const queue = await call('GET', '/api/v1/admin/accounts?pending=true', moderator.token);
  expect(ids(queue.body)).toEqual([p]);
  expect(queue.body[0]).toMatchObject({ approved: false, ip: '203.0.113.9' });
  // Staff who manage users hear of every sign-up.
  await eventually(
    async () =>
      (await collection(core.db, notifications).countDocuments({
        accountId: moderator.account._id,
        type: 'admin.sign_up',
        fromAccountId: pendingAccount!._id,
      })) === 1,
    30_000,
    'admin.sign_up',
  );
  const approved = await call('POST', `/api/v1/admin/accounts/${p}/approve`, moderator.token);
  expect(approved.body.approved).toBe(true);
  expect((await call('POST', `/api/v1/admin/accounts/${p}/approve`, moderator.token)).status).toBe(403);

  await signUp('second@example.test', '203.0.113.10');
  const second = await collection(core.db, accounts).findOne({ usernameLower: `newcomer${signUps}` });
  const rejected = await call('POST', `/api/v1/admin/accounts/${second!._id}/reject`, moderator.token);
  expect(rejected.status).toBe(200);
  expect(await collection(core.db, accounts).countDocuments({ _id: second!._id })).toBe(0);

  const blocking = await call('PUT', `/api/v1/admin/ip_blocks/${rule.body.id}`, admin.token, {
    severity: 'sign_up_block',
  });
  expect(blocking.body.severity).toBe('sign_up_block');
  expect((await signUp('third@example.test', '203.0.113.11')).status).toBe(403);
  // An expired rule no longer applies.
  await call('PUT', `/api/v1/admin/ip_blocks/${rule.body.id}`, admin.token, { expires_in: 1 });
  let attempt = 20; // a fresh address each time: sign-ups are rate-limited per IP
  await eventually(
    async () => (await signUp(`late${attempt}@example.test`, `203.0.113.${attempt++}`)).status === 200,
    15_000,
    'expiry',
  );
  expect(await call('DELETE', `/api/v1/admin/ip_blocks/${rule.body.id}`, admin.token)).toMatchObject({
    status: 200,
    body: {},
  });
});

test('e-mail domain blocks (with MX variants) and canonical blocks apply at sign-up and e-mail change', async () => {
  const block = await call('POST', '/api/v1/admin/email_domain_blocks', admin.token, { domain: 'Blocked.test' });
  expect(block.status).toBe(200);
  expect(block.body).toMatchObject({ domain: 'blocked.test', allow_with_approval: false });
  expect((await call('POST', '/api/v1/admin/email_domain_blocks', admin.token, { domain: '' })).body.error).toBe(
    "Validation failed: Domain can't be blank",
  );
  const listed = await call('GET', '/api/v1/admin/email_domain_blocks', admin.token);
  // The MX variant is recorded but listed under its block only.
  expect(listed.body.map((b: { domain: string }) => b.domain)).toEqual(['blocked.test']);

  const refused = await signUp('someone@sub.blocked.test');
  expect(refused.status).toBe(422);
  expect(refused.body.details.email).toEqual([
    { error: 'ERR_BLOCKED', description: 'uses a disallowed e-mail provider' },
  ]);
  // Another domain served by the same mail servers.
  expect((await signUp('someone@alias.test')).status).toBe(422);

  // An address change to a blocked domain is refused too (an unconfirmed user changing the address).
  const okSignUp = await signUp('fine@example.test');
  expect(okSignUp.status).toBe(200);
  const token = okSignUp.body.access_token as string;
  const change = await call('POST', '/api/v1/emails/confirmations', token, { email: 'evil@blocked.test' });
  expect(change.status).toBe(422);
  expect((await call('POST', '/api/v1/emails/confirmations', token, { email: 'other@example.test' })).status).toBe(200);

  const canonical = await call('POST', '/api/v1/admin/canonical_email_blocks', admin.token, {
    email: 'John.Doe+promo@example.org',
  });
  expect(canonical.status).toBe(200);
  expect(canonical.body.canonical_email_hash).toMatch(/^[0-9a-f]{64}$/);
  const again = await call('POST', '/api/v1/admin/canonical_email_blocks', admin.token, {
    canonical_email_hash: canonical.body.canonical_email_hash,
  });
  expect(again.body.error).toBe('Validation failed: Canonical email hash has already been taken');
  const matched = await call('POST', '/api/v1/admin/canonical_email_blocks/test', admin.token, {
    email: 'johndoe@example.org',
  });
  expect(ids(matched.body)).toEqual([canonical.body.id]);
  expect((await call('POST', '/api/v1/admin/canonical_email_blocks/test', admin.token, {})).status).toBe(400);
  expect((await signUp('j.o.h.n.d.o.e@example.org')).status).toBe(422);
  expect((await call('POST', '/api/v1/emails/confirmations', token, { email: 'johndoe+x@example.org' })).status).toBe(
    422,
  );

  expect(await call('DELETE', `/api/v1/admin/canonical_email_blocks/${canonical.body.id}`, admin.token)).toMatchObject({
    status: 200,
    body: {},
  });
  expect(await call('DELETE', `/api/v1/admin/email_domain_blocks/${block.body.id}`, admin.token)).toMatchObject({
    status: 200,
    body: {},
  });
  expect((await signUp('someone@alias.test')).status).toBe(200);
});

test('domain blocks: conflicts with existing_domain_block, updates, deletes; allows are idempotent', async () => {
  const created = await call('POST', '/api/v1/admin/domain_blocks', admin.token, {
    domain: 'evil.example',
    severity: 'suspend',
    reject_media: true,
    private_comment: 'spam wave',
    public_comment: 'Spam',
    obfuscate: true,
  });
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({
    domain: 'evil.example',
    digest: expect.stringMatching(/^[0-9a-f]{64}$/),
    severity: 'suspend',
    reject_media: true,
    reject_reports: false,
    private_comment: 'spam wave',
    public_comment: 'Spam',
    obfuscate: true,
  });
  const conflict = await call('POST', '/api/v1/admin/domain_blocks', admin.token, { domain: 'sub.evil.example' });
  expect(conflict.status).toBe(422);
  expect(conflict.body.existing_domain_block).toMatchObject({ id: created.body.id, domain: 'evil.example' });
  expect((await call('POST', '/api/v1/admin/domain_blocks', admin.token, {})).body.error).toBe(
    "Validation failed: Domain can't be blank",
  );
  const updated = await call('PUT', `/api/v1/admin/domain_blocks/${created.body.id}`, admin.token, {
    severity: 'silence',
  });
  expect(updated.body).toMatchObject({ severity: 'silence', reject_media: true });
  const badSeverity = await call('PUT', `/api/v1/admin/domain_blocks/${created.body.id}`, admin.token, {
    severity: 'nuke',
  });
  expect(badSeverity.body.error).toBe('Validation failed: Severity is not included in the list');
  expect(ids((await call('GET', '/api/v1/admin/domain_blocks', admin.token)).body)).toEqual([created.body.id]);
  expect((await call('GET', `/api/v1/admin/domain_blocks/${created.body.id}`, admin.token)).body.domain).toBe(
    'evil.example',
  );
  expect(await call('DELETE', `/api/v1/admin/domain_blocks/${created.body.id}`, admin.token)).toMatchObject({
    status: 200,
    body: {},
  });
  expect((await call('GET', `/api/v1/admin/domain_blocks/${created.body.id}`, admin.token)).status).toBe(404);

  const allow = await call('POST', '/api/v1/admin/domain_allows', admin.token, { domain: 'Friends.Example' });
  expect(allow.body).toMatchObject({ domain: 'friends.example', created_at: expect.any(String) });
  const again = await call('POST', '/api/v1/admin/domain_allows', admin.token, { domain: 'friends.example' });
  expect(again.body.id).toBe(allow.body.id);
  expect((await call('POST', '/api/v1/admin/domain_allows', admin.token, { domain: 'not a domain' })).status).toBe(422);
  expect(await call('DELETE', `/api/v1/admin/domain_allows/${allow.body.id}`, admin.token)).toMatchObject({
    status: 200,
    body: {},
  });
});

test('measures, dimensions and retention are computed from the data', async () => {
  const today = new Date().toISOString().slice(0, 10);
  const weekAgo = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
  const measures = await call('POST', '/api/v1/admin/measures', owner.token, {
    keys: ['new_users', 'opened_reports', 'unknown_key'],
    start_at: weekAgo,
    end_at: today,
  });
  expect(measures.status).toBe(200);
  expect(measures.body.map((m: { key: string }) => m.key)).toEqual(['new_users', 'opened_reports']);
  const newUsers = measures.body[0];
  expect(newUsers.data).toHaveLength(7);
  expect(Number(newUsers.total)).toBeGreaterThanOrEqual(4);
  expect(newUsers.data.at(-1)).toEqual({ date: `${today}T00:00:00.000Z`, value: newUsers.total });
  expect(Number(measures.body[1].total)).toBeGreaterThanOrEqual(1);
  expect((await call('POST', '/api/v1/admin/measures', owner.token, { keys: ['new_users'] })).status).toBe(400);

  const dims = await call('POST', '/api/v1/admin/dimensions', owner.token, {
    keys: ['languages', 'software_versions'],
    start_at: weekAgo,
    end_at: today,
  });
  expect(dims.body.map((d: { key: string }) => d.key)).toEqual(['languages', 'software_versions']);
  expect(dims.body[1].data[0]).toMatchObject({ key: 'nodejs', value: process.versions.node });

  const retention = await call('POST', '/api/v1/admin/retention', owner.token, {
    start_at: weekAgo,
    end_at: today,
    frequency: 'day',
  });
  expect(retention.body).toHaveLength(7);
  const last = retention.body.at(-1);
  expect(last).toMatchObject({ frequency: 'day', data: [{ rate: 1, value: expect.any(String) }] });
  expect((await call('POST', '/api/v1/admin/retention', owner.token, {})).body).toEqual([]);
});

test("a tag's dimensions count its statuses by language and by server", async () => {
  const today = new Date().toISOString().slice(0, 10);
  const posted = await call('POST', '/api/v1/statuses', owner.token, {
    status: 'about #dimensiontag',
    language: 'de',
  });
  expect(posted.status).toBe(200);
  const tag = (posted.body.tags as { name: string }[])[0];
  expect(tag.name).toBe('dimensiontag');
  const tagId = String((await collection(core.db, statuses).findOne({ _id: BigInt(posted.body.id) }))?.tags[0]?.id);
  const dims = await call('POST', '/api/v1/admin/dimensions', owner.token, {
    keys: ['tag_languages', 'tag_servers'],
    start_at: today,
    end_at: today,
    tag_languages: { id: tagId },
    tag_servers: { id: tagId },
  });
  expect(dims.status).toBe(200);
  expect(dims.body).toEqual([
    { key: 'tag_languages', data: [{ key: 'de', human_key: 'de', value: '1' }] },
    { key: 'tag_servers', data: [{ key: core.config.localDomain, human_key: core.config.localDomain, value: '1' }] },
  ]);
});

test('a no_access IP rule shuts its range out of every route', async () => {
  const from = (ip: string) => ({ 'x-forwarded-for': ip });
  const rule = await call('POST', '/api/v1/admin/ip_blocks', admin.token, {
    ip: '192.0.2.0/24',
    severity: 'no_access',
  });
  expect(rule.status).toBe(200);
  const blocked = await call('GET', '/api/v1/timelines/public', null, undefined, from('192.0.2.55'));
  expect(blocked.status).toBe(403);
  expect(blocked.body).toEqual({ error: 'Blocked' });
  expect((await call('GET', '/api/v1/timelines/public', null, undefined, from('198.51.100.1'))).status).toBe(200);
  expect((await call('DELETE', `/api/v1/admin/ip_blocks/${rule.body.id}`, admin.token)).status).toBe(200);
  expect((await call('GET', '/api/v1/timelines/public', null, undefined, from('192.0.2.55'))).status).toBe(200);
});
