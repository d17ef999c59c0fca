// The whole instance surface over real HTTP: /api/v2/instance and /api/v1/instance hold every
// attribute of the reference (mastodon-api-entities.md §25, §26), with the limits the server
// enforces; the /api/v1/instance/* documents; NodeInfo 2.0 valid against its schema; and admin
// changes through the CLI (in-process and as a separate process) showing up at once.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser } from '../../support/fixtures.ts';
import type { JsonClient } from '../../support/http.ts';
import { png } from '../../support/mediaFiles.ts';
import { nodeBin, projectRoot, serverEnv } from '../../support/processes.ts';
import type { Core } from '../../../services/core/context.ts';
import { LIMITS } from '../../../services/core/instance/limits.ts';
import { setRegistrationsMode } from '../../../services/core/settings/settings.ts';
import { parseSiteCommand } from '../../../services/cli/siteCommands.ts';
import { createDomainBlock } from '../../../services/core/moderation/domainBlocks.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';

const exec = promisify(execFile);

/** Keys of the reference's Instance (v2) table that are always present (N/O "-" or "N"), up to 4.4. */
const V2_ATTRIBUTES = [
  'domain',
  'title',
  'version',
  'source_url',
  'description',
  'usage.users.active_month',
  'thumbnail.url',
  'icon',
  'languages',
  'configuration',
  'registrations.enabled',
  'registrations.approval_required',
  'registrations.message',
  'registrations.url',
  'registrations.min_age',
  'registrations.reason_required',
  'api_versions',
  'contact.email',
  'contact.account',
  'rules',
];
const V2_CONFIGURATION = [
  'urls.streaming',
  'urls.status',
  'urls.about',
  'urls.privacy_policy',
  'urls.terms_of_service',
  'vapid.public_key',
  'accounts.max_featured_tags',
  'accounts.max_pinned_statuses',
  'statuses.max_characters',
  'statuses.max_media_attachments',
  'statuses.characters_reserved_per_url',
  'media_attachments.supported_mime_types',
  'media_attachments.description_limit',
  'media_attachments.image_size_limit',
  'media_attachments.image_matrix_limit',
  'media_attachments.video_size_limit',
  'media_attachments.video_frame_rate_limit',
  'media_attachments.video_matrix_limit',
  'polls.max_options',
  'polls.max_characters_per_option',
  'polls.min_expiration',
  'polls.max_expiration',
  'translation.enabled',
  'limited_federation',
];
/** The reference's V1::Instance table. */
const V1_ATTRIBUTES = [
  'uri',
  'title',
  'short_description',
  'description',
  'email',
  'version',
  'urls.streaming_api',
  'stats.user_count',
  'stats.status_count',
  'stats.domain_count',
  'thumbnail',
  'languages',
  'registrations',
  'approval_required',
  'invites_enabled',
  'configuration.accounts.max_featured_tags',
  'configuration.accounts.max_pinned_statuses',
  'configuration.statuses.max_characters',
  'configuration.statuses.max_media_attachments',
  'configuration.statuses.characters_reserved_per_url',
  'configuration.media_attachments.supported_mime_types',
  'configuration.media_attachments.image_size_limit',
  'configuration.media_attachments.image_matrix_limit',
  'configuration.media_attachments.video_size_limit',
  'configuration.media_attachments.video_frame_rate_limit',
  'configuration.media_attachments.video_matrix_limit',
  'configuration.polls.max_options',
  'configuration.polls.max_characters_per_option',
  'configuration.polls.min_expiration',
  'configuration.polls.max_expiration',
  'contact_account',
  'rules',
];

function has(obj: unknown, path: string): boolean {
  let at: unknown = obj;
  for (const part of path.split('.')) {
    if (typeof at !== 'object' || at === null || !(part in at)) return false;
    at = (at as Record<string, unknown>)[part];
  }
  return true;
}

describe('instance surface', () => {
  let api: TestApi;
  let core: Core;
  let call: JsonClient;

  /** Runs an admin command in this process, as the CLI would. */
  async function admin(...argv: string[]): Promise<string[]> {
    const command = parseSiteCommand(argv);
    if (!command) throw new Error(`not a site command: ${argv.join(' ')}`);
    const lines: string[] = [];
    await command(core, (l) => lines.push(l));
    return lines;
  }

  beforeAll(async () => {
    api = await startTestApi({ LOCAL_DOMAIN: 'social.example', LOCAL_HTTPS: 'true' }, { mediaDir: true });
    ({ core, call } = api);
  });
  afterAll(() => api?.close());

  it('/api/v2/instance has every attribute of the reference and the limits the server enforces', async () => {
    const { status, body } = await call('GET', '/api/v2/instance');
    expect(status).toBe(200);
    for (const path of V2_ATTRIBUTES) expect([path, has(body, path)]).toEqual([path, true]);
    for (const path of V2_CONFIGURATION) expect([path, has(body.configuration, path)]).toEqual([path, true]);
    expect(body.version).toMatch(/^4\.\d+\.\d+ \(compatible; fedisrv \d+\.\d+\.\d+\)$/);
    expect(body.configuration.accounts).toEqual({
      max_featured_tags: 10,
      max_pinned_statuses: LIMITS.accounts.maxPinnedStatuses,
    });
    expect(body.configuration.statuses.max_characters).toBe(LIMITS.statuses.maxCharacters);
    expect(body.configuration.media_attachments.image_size_limit).toBe(LIMITS.mediaAttachments.imageSizeLimit);
    expect(body.configuration.media_attachments.video_size_limit).toBe(LIMITS.mediaAttachments.videoSizeLimit);
    expect(body.configuration.polls.max_options).toBe(LIMITS.polls.maxOptions);
    expect(body.configuration.translation).toEqual({ enabled: false });
    expect(body.configuration.vapid.public_key).toMatch(/^[A-Za-z0-9_-]{80,}$/);
    // Levels 3-5 (attribution_domains, delete_media, filter blur) are implemented; 6 is undocumented.
    expect(body.api_versions.mastodon).toBe(5);
    expect(body.title).toBe('social.example');
    // The default thumbnail is a real image.
    expect(body.thumbnail.url).toBe('https://social.example/packs/media/images/preview.png');
    const image = await fetch(`${api.server.url}/packs/media/images/preview.png`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect((await image.arrayBuffer()).byteLength).toBeGreaterThan(100);
  });

  it('/api/v1/instance has every attribute of the reference', async () => {
    const { status, body } = await call('GET', '/api/v1/instance');
    expect(status).toBe(200);
    for (const path of V1_ATTRIBUTES) expect([path, has(body, path)]).toEqual([path, true]);
    expect(body.version).toMatch(/^4\.\d+\.\d+ /);
  });

  it('title, description, contact, rules and thumbnail set by an administrator show at once', async () => {
    const before = await call('GET', '/api/v2/instance'); // now cached
    expect(before.body.rules).toEqual([]);
    await createTestUser(core, { username: 'admin_contact' });
    expect(await admin('instance', 'set', 'title', 'Social Example')).toEqual(['OK']);
    await admin('instance', 'set', 'description', 'A friendly place.');
    await admin('instance', 'set', 'contact-email', 'admin@social.example');
    await admin('instance', 'set', 'contact-account', 'admin_contact');
    const [added] = await admin('rules', 'add', 'Be nice', '--hint', 'No harassment', '--priority', '1');
    await admin('rules', 'add', 'No spam');
    const ruleId = added.split(' ')[1];
    const file = join(tmpdir(), `thumb-${process.pid}.png`);
    await writeFile(file, await png(1600, 900));
    try {
      await admin('instance', 'thumbnail', file);
      await admin('instance', 'icon', file);
    } finally {
      await rm(file, { force: true });
    }

    const { body } = await call('GET', '/api/v2/instance');
    expect(body.title).toBe('Social Example');
    expect(body.description).toBe('A friendly place.');
    expect(body.contact.email).toBe('admin@social.example');
    expect(body.contact.account).toMatchObject({ username: 'admin_contact', acct: 'admin_contact' });
    // Ordered by priority (then id): the rule added later but with priority 0 comes first.
    expect(body.rules).toEqual([
      { id: expect.any(String), text: 'No spam', hint: '', translations: {} },
      { id: ruleId, text: 'Be nice', hint: 'No harassment', translations: {} },
    ]);
    expect(body.thumbnail.url).toMatch(/\/system\/site_uploads\/files\/thumbnail\/1200x630\/[0-9a-f]+\.png$/);
    expect(Object.keys(body.thumbnail.versions)).toEqual(['@1x', '@2x']);
    expect(body.thumbnail.blurhash).toEqual(expect.any(String));
    expect(body.icon.map((i: { size: string }) => i.size)).toEqual([
      '36x36',
      '48x48',
      '72x72',
      '96x96',
      '144x144',
      '192x192',
      '256x256',
      '384x384',
      '512x512',
    ]);
    const icon = await fetch(body.icon[0].src.replace('https://social.example', api.server.url));
    expect(icon.status).toBe(200);
    const image = await fetch(body.thumbnail.url.replace('https://social.example', api.server.url));
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');

    const v1 = (await call('GET', '/api/v1/instance')).body;
    expect(v1).toMatchObject({
      title: 'Social Example',
      short_description: 'A friendly place.',
      email: 'admin@social.example',
    });
    expect(v1.thumbnail).toBe(body.thumbnail.url);
    expect((await call('GET', '/api/v1/instance/rules')).body).toEqual(body.rules);

    await admin('rules', 'remove', ruleId);
    expect((await call('GET', '/api/v1/instance/rules')).body.map((r: { text: string }) => r.text)).toEqual([
      'No spam',
    ]);
  });

  it('a change made by the CLI process reaches the cached documents of the API process', async () => {
    expect((await call('GET', '/api/v2/instance')).body.title).toBe('Social Example');
    const env = { ...process.env, ...serverEnv(core.config) };
    const { stdout } = await exec(
      nodeBin,
      [join(projectRoot, 'services/cli/main.ts'), 'instance', 'set', 'title', 'Renamed by CLI'],
      { cwd: projectRoot, env, timeout: 60_000 },
    );
    expect(stdout.trim()).toBe('OK');
    expect((await call('GET', '/api/v2/instance')).body.title).toBe('Renamed by CLI');
    expect((await call('GET', '/nodeinfo/2.0')).body.metadata.nodeName).toBe('Renamed by CLI');
  });

  it('bad CLI input fails with one line and changes nothing', () => {
    expect(() => parseSiteCommand(['instance', 'set', 'colour', 'blue'])).toThrow(/Unknown instance setting/);
    expect(() => parseSiteCommand(['instance', 'set', 'domain-blocks', 'everyone'])).toThrow(/disabled, users, all/);
    expect(() => parseSiteCommand(['rules', 'remove', 'abc'])).toThrow(/numeric ID/);
    expect(() => parseSiteCommand(['announcements', 'create', 'x', '--starts-at', 'soon'])).toThrow(/date/);
  });

  it('NodeInfo 2.0 is linked from /.well-known/nodeinfo and valid against the schema', async () => {
    const wk = await call('GET', '/.well-known/nodeinfo');
    expect(wk.status).toBe(200);
    expect(wk.body).toEqual({
      links: [{ rel: 'http://nodeinfo.diaspora.software/ns/schema/2.0', href: 'https://social.example/nodeinfo/2.0' }],
    });
    const res = await fetch(`${api.server.url}/nodeinfo/2.0`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(
      /^application\/json; profile="http:\/\/nodeinfo\.diaspora\.software\/ns\/schema\/2\.0#"/,
    );
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const doc = (await res.json()) as Record<string, unknown>;
    const schema = JSON.parse(readFileSync(join(projectRoot, 'test/fixtures/nodeinfo-2.0.schema.json'), 'utf8'));
    // Draft-04 markers; the keywords this schema uses mean the same in Ajv's default draft.
    delete schema.$schema;
    delete schema.id;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    expect([validate(doc), validate.errors]).toEqual([true, null]);
    expect(doc).toMatchObject({
      version: '2.0',
      software: { name: 'fedisrv', version: expect.stringMatching(/^\d+\.\d+\.\d+$/) },
      protocols: ['activitypub'],
      openRegistrations: true,
      usage: { users: { total: expect.any(Number), activeMonth: expect.any(Number) }, localPosts: expect.any(Number) },
    });
    // The validator is real: an unlisted member fails it.
    expect(validate({ ...doc, extra: 1 })).toBe(false);
    // Closing registrations shows at once (the cached document is dropped).
    await setRegistrationsMode(core, 'closed');
    try {
      const closed = (await call('GET', '/nodeinfo/2.0')).body;
      expect(closed.openRegistrations).toBe(false);
      expect(validate(closed)).toBe(true);
    } finally {
      await setRegistrationsMode(core, 'open');
    }
  });

  it('peers, activity, extended description, privacy policy, terms and languages', async () => {
    expect((await call('GET', '/api/v1/instance/peers')).body).toEqual([]);
    const activity = await call('GET', '/api/v1/instance/activity');
    expect(activity.status).toBe(200);
    expect(activity.body).toHaveLength(12);
    for (const w of activity.body) {
      expect(w).toEqual({
        week: expect.stringMatching(/^\d+$/),
        statuses: expect.stringMatching(/^\d+$/),
        logins: expect.stringMatching(/^\d+$/),
        registrations: expect.stringMatching(/^\d+$/),
      });
    }
    const weeks = activity.body.map((w: { week: string }) => Number(w.week));
    expect(weeks[0] - weeks[1]).toBe(7 * 86400);
    expect(new Date(weeks[0] * 1000).getUTCDay()).toBe(1); // Monday
    expect(Number(activity.body[0].registrations)).toBeGreaterThanOrEqual(1);

    await admin('instance', 'set', 'peers', 'off');
    await admin('instance', 'set', 'activity', 'off');
    expect((await call('GET', '/api/v1/instance/peers')).status).toBe(404);
    expect((await call('GET', '/api/v1/instance/activity')).status).toBe(404);
    await admin('instance', 'set', 'peers', 'on');
    await admin('instance', 'set', 'activity', 'on');

    const ext = await call('GET', '/api/v1/instance/extended_description');
    expect(ext.body).toEqual({ updated_at: null, content: '' });
    await admin('instance', 'set', 'extended-description', 'Line one\n\n<script>alert(1)</script>Two');
    const ext2 = (await call('GET', '/api/v1/instance/extended_description')).body;
    expect(ext2.content).not.toContain('<script');
    expect(ext2.content).toContain('Two');
    expect(Date.now() - Date.parse(ext2.updated_at)).toBeLessThan(60_000);

    const privacy = (await call('GET', '/api/v1/instance/privacy_policy')).body;
    expect(privacy.content).toContain('social.example');
    expect(privacy.updated_at).toBe('2022-10-07T00:00:00.000Z');
    expect((await call('GET', '/api/v1/instance/terms_of_service')).status).toBe(404);
    await admin('instance', 'set', 'terms', 'Play fair.');
    const terms = await call('GET', '/api/v1/instance/terms_of_service');
    expect(terms.body).toEqual({
      effective_date: expect.stringMatching(/^\d{4}-\d\d-\d\d$/),
      effective: true,
      content: '<p>Play fair.</p>',
      succeeded_by: null,
    });
    expect((await call('GET', `/api/v1/instance/terms_of_service/${terms.body.effective_date}`)).status).toBe(200);
    expect((await call('GET', '/api/v1/instance/terms_of_service/1999-01-01')).status).toBe(404);
    expect((await call('GET', '/api/v2/instance')).body.configuration.urls.terms_of_service).toBe(
      'https://social.example/terms-of-service',
    );

    const langs = (await call('GET', '/api/v1/instance/languages')).body;
    expect(langs).toContainEqual({ code: 'de', name: 'German' });
    expect(langs.length).toBeGreaterThan(150);
    expect((await call('GET', '/api/v1/instance/translation_languages')).body).toEqual({});
  });

  it('activity counts local statuses of the week', async () => {
    const { account } = await createTestUser(core, { username: 'poster' });
    const id = await core.statusIds.next();
    await collection(core.db, statuses).insertOne({
      _id: id,
      accountId: account._id,
      local: true,
      reblogOfId: null,
      deletedAt: null,
    } as never);
    await admin('instance', 'set', 'activity', 'on'); // drops the cached document
    const [week] = (await call('GET', '/api/v1/instance/activity')).body;
    expect(Number(week.statuses)).toBe(1);
  });

  it('domain blocks follow the visibility setting', async () => {
    const { token } = await createTestUser(core, { username: 'reader' });
    await createDomainBlock(core, { domain: 'spam.example', severity: 'suspend', publicComment: 'Spam' }, null);
    await createDomainBlock(core, { domain: 'loud.example', severity: 'silence', obfuscate: true }, null);
    await createDomainBlock(core, { domain: 'noop.example', severity: 'noop' }, null);
    const res = await fetch(`${api.server.url}/api/v1/instance/domain_blocks`);
    expect(res.status).toBe(404);
    await admin('instance', 'set', 'domain-blocks', 'users');
    expect((await call('GET', '/api/v1/instance/domain_blocks')).status).toBe(401);
    const asUser = await call('GET', '/api/v1/instance/domain_blocks', token);
    expect(asUser.status).toBe(200);
    expect(asUser.body).toEqual([
      { domain: 'loud.****ple', digest: expect.stringMatching(/^[0-9a-f]{64}$/), severity: 'silence' },
      { domain: 'spam.example', digest: expect.stringMatching(/^[0-9a-f]{64}$/), severity: 'suspend' },
    ]);
    await admin('instance', 'set', 'domain-blocks', 'all');
    await admin('instance', 'set', 'domain-blocks-rationale', 'all');
    const open = await call('GET', '/api/v1/instance/domain_blocks');
    expect(open.status).toBe(200);
    expect(open.body[1]).toMatchObject({ domain: 'spam.example', comment: 'Spam' });
  });
});

describe('instance surface in limited-federation mode', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ LIMITED_FEDERATION_MODE: 'true' });
  });
  afterAll(() => api?.close());

  it('says so and hides peers, activity and the active-user count', async () => {
    await createTestUser(api.core, { username: 'active' });
    const { body } = await api.call('GET', '/api/v2/instance');
    expect(body.configuration.limited_federation).toBe(true);
    expect(body.usage.users.active_month).toBe(0);
    expect((await api.call('GET', '/api/v1/instance/peers')).status).toBe(404);
    expect((await api.call('GET', '/api/v1/instance/activity')).status).toBe(404);
  });
});
