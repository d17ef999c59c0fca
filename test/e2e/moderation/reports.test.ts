// Reports end to end: POST /api/v1/reports with Mastodon's validation, the ReportCreated event,
// `admin.report` notifications (notifications pipeline) to staff who may manage reports, the e-mail
// to them through the mailer pipeline and a real SMTP server, and the admin report workflow.
import type { Core } from '../../../services/core/context.ts';
import type { Id } from '../../../services/core/ids.ts';
import { addRule, removeRule } from '../../../services/core/instance/rules.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { notifications } from '../../../services/core/model/notifications.ts';
import type { TestApi } from '../../support/api.ts';
import { startMailingApi, type MailingApi } from '../../support/mailingApi.ts';
import { createTestApp, createTestUser, type TestUser } from '../../support/fixtures.ts';
import { eventually } from '../../support/core.ts';
import type { SmtpSink } from '../../support/smtpSink.ts';

jest.setTimeout(120_000);

const ADMIN = ['read', 'write', 'admin:read', 'admin:write'];
let api: TestApi;
let core: Core;
let mailing: MailingApi;
let smtp: SmtpSink;
let reporter: TestUser, spammer: TestUser, bystander: TestUser, owner: TestUser, moderator: TestUser, plain: TestUser;
let spam: string, other: string;
let rule: Id, deletedRule: Id;

const call = (...args: Parameters<TestApi['call']>) => api.call(...args);

beforeAll(async () => {
  mailing = await startMailingApi();
  ({ api, smtp } = mailing);
  core = api.core;
  [reporter, spammer, bystander, plain] = await Promise.all([
    createTestUser(core),
    createTestUser(core),
    createTestUser(core),
    createTestUser(core),
  ]);
  owner = await createTestUser(core, { role: 'Owner', scopes: ADMIN, email: 'owner@staff.test' });
  moderator = await createTestUser(core, { role: 'Moderator', scopes: ADMIN, email: 'mod@staff.test' });
  spam = (await call('POST', '/api/v1/statuses', spammer.token, { status: 'buy now' })).body.id;
  other = (await call('POST', '/api/v1/statuses', bystander.token, { status: 'innocent' })).body.id;
  rule = (await addRule(core, { text: 'No spam' }))._id;
  // A deleted rule cannot be cited any more.
  deletedRule = (await addRule(core, { text: 'Old rule' }))._id;
  await removeRule(core, deletedRule);
});

afterAll(async () => {
  await mailing?.close();
});

test('POST /api/v1/reports validates as Mastodon does', async () => {
  const target = String(spammer.account._id);
  expect((await call('POST', '/api/v1/reports', reporter.token, {})).status).toBe(400);
  expect((await call('POST', '/api/v1/reports', reporter.token, { account_id: '99999999' })).status).toBe(404);
  expect((await call('POST', '/api/v1/reports', reporter.token, { account_id: 'x' })).status).toBe(404);
  // Statuses must belong to the reported account.
  const foreign = await call('POST', '/api/v1/reports', reporter.token, { account_id: target, status_ids: [other] });
  expect(foreign.status).toBe(404);
  const long = await call('POST', '/api/v1/reports', reporter.token, { account_id: target, comment: 'x'.repeat(1001) });
  expect(long.status).toBe(422);
  expect(long.body.error).toMatch(/Comment is too long/);
  const category = await call('POST', '/api/v1/reports', reporter.token, { account_id: target, category: 'rude' });
  expect(category.status).toBe(422);
  for (const bad of ['42', String(deletedRule)]) {
    const rules = await call('POST', '/api/v1/reports', reporter.token, { account_id: target, rule_ids: [bad] });
    expect(rules.status).toBe(422);
    expect(rules.body.error).toBe('Validation failed: Rule ids does not reference valid rules');
  }
  const app = await createTestApp(core, { scopes: ['write'] });
  expect((await call('POST', '/api/v1/reports', app.token, { account_id: target })).status).toBe(422);
  const readOnly = await createTestUser(core, { scopes: ['read'] });
  expect((await call('POST', '/api/v1/reports', readOnly.token, { account_id: target })).status).toBe(403);
  expect((await call('POST', '/api/v1/reports', null, { account_id: target })).status).toBe(401);
  expect(await collection(core.db, notifications).countDocuments({ type: 'admin.report' })).toBe(0);
});

test('a report is stored, announced, notified to staff who manage reports and mailed to them', async () => {
  const res = await call('POST', '/api/v1/reports', reporter.token, {
    account_id: String(spammer.account._id),
    status_ids: [spam],
    comment: 'spam spam spam',
    rule_ids: [String(rule)],
  });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    action_taken: false,
    action_taken_at: null,
    category: 'violation', // rules make it a violation report
    comment: 'spam spam spam',
    forwarded: false,
    status_ids: [spam],
    rule_ids: [String(rule)],
    target_account: { id: String(spammer.account._id) },
  });
  const reportId = res.body.id as string;
  const event = api.published.find((e) => e.type === 'ReportCreated');
  expect(event?.payload).toMatchObject({ reportId, targetAccountId: String(spammer.account._id), statusIds: [spam] });

  // admin.report for the Owner and the Moderator (both may manage reports), nobody else.
  await eventually(
    async () => (await collection(core.db, notifications).countDocuments({ type: 'admin.report' })) === 2,
    30_000,
    'admin.report notifications',
  );
  for (const staff of [owner, moderator]) {
    const list = await call('GET', '/api/v1/notifications?types[]=admin.report', staff.token);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({
      type: 'admin.report',
      account: { id: String(reporter.account._id) },
      report: { id: reportId, category: 'violation', target_account: { id: String(spammer.account._id) } },
    });
  }
  const grouped = await call('GET', '/api/v2/notifications?types[]=admin.report', moderator.token);
  expect(grouped.body.notification_groups).toEqual([
    expect.objectContaining({ type: 'admin.report', report: expect.objectContaining({ id: reportId }) }),
  ]);
  expect((await call('GET', '/api/v1/notifications', plain.token)).body).toHaveLength(0);

  const mail = await smtp.waitFor('mod@staff.test');
  expect(mail.subject).toContain(`#${reportId}`);
  expect(mail.text).toContain('spam spam spam');
  await smtp.waitFor('owner@staff.test');
});

test('moderators work through reports: list, show, assign, update, resolve, reopen', async () => {
  const created = await call('POST', '/api/v1/reports', bystander.token, {
    account_id: String(spammer.account._id),
    category: 'spam',
  });
  const id = created.body.id as string;
  const list = await call('GET', '/api/v1/admin/reports', moderator.token);
  expect(list.status).toBe(200);
  expect(list.body.map((r: { id: string }) => r.id)).toContain(id);
  const byReporter = await call('GET', `/api/v1/admin/reports?account_id=${bystander.account._id}`, moderator.token);
  expect(byReporter.body.map((r: { id: string }) => r.id)).toEqual([id]);

  const shown = await call('GET', `/api/v1/admin/reports/${id}`, moderator.token);
  expect(shown.body).toMatchObject({
    id,
    category: 'spam',
    action_taken: false,
    account: { id: String(bystander.account._id), account: { id: String(bystander.account._id) } },
    target_account: { id: String(spammer.account._id), email: expect.any(String) },
    assigned_account: null,
    statuses: [],
    rules: [],
  });

  const assigned = await call('POST', `/api/v1/admin/reports/${id}/assign_to_self`, moderator.token);
  expect(assigned.body.assigned_account.id).toBe(String(moderator.account._id));
  const unassigned = await call('POST', `/api/v1/admin/reports/${id}/unassign`, moderator.token);
  expect(unassigned.body.assigned_account).toBeNull();

  const updated = await call('PUT', `/api/v1/admin/reports/${id}`, moderator.token, {
    category: 'violation',
    rule_ids: [String(rule)],
  });
  expect(updated.body).toMatchObject({ category: 'violation', rules: [{ id: String(rule), text: 'No spam' }] });
  const badRule = await call('PUT', `/api/v1/admin/reports/${id}`, moderator.token, { rule_ids: ['77'] });
  expect(badRule.status).toBe(422);

  const resolved = await call('POST', `/api/v1/admin/reports/${id}/resolve`, moderator.token);
  expect(resolved.body).toMatchObject({
    action_taken: true,
    action_taken_by_account: { id: String(moderator.account._id) },
  });
  expect(
    (await call('GET', '/api/v1/admin/reports', moderator.token)).body.map((r: { id: string }) => r.id),
  ).not.toContain(id);
  expect(
    (await call('GET', '/api/v1/admin/reports?resolved=true', moderator.token)).body.map((r: { id: string }) => r.id),
  ).toContain(id);
  const reopened = await call('POST', `/api/v1/admin/reports/${id}/reopen`, moderator.token);
  expect(reopened.body).toMatchObject({ action_taken: false, action_taken_at: null });
  expect((await call('GET', '/api/v1/admin/reports/99999', moderator.token)).status).toBe(404);
});
