// Custom emojis end to end: administrators add (PNG, animated GIF), categorise, hide, disable and
// remove them with the CLI commands; GET /api/v1/custom_emojis lists the enabled ones (cached and
// refreshed on change); `:shortcode:` in statuses, display names and notes becomes `emojis` entries;
// `emoji import` reads a .tar.gz made by GNU tar as tootctl does.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFile, rm, mkdtemp, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser } from '../../support/fixtures.ts';
import type { JsonClient } from '../../support/http.ts';
import { animatedGif, png } from '../../support/mediaFiles.ts';
import type { Core } from '../../../services/core/context.ts';
import { parseSiteCommand } from '../../../services/cli/siteCommands.ts';
import { shortcodesIn } from '../../../services/core/emojis/emojis.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { customEmojis } from '../../../services/core/model/customEmojis.ts';
import { renderLocalActor, renderStatusObject } from '../../../services/core/activitypub/render/load.ts';
import { copyRemoteEmoji } from '../../../services/core/emojis/emojiCopies.ts';
import { storageFor } from '../../../services/core/media/storage.ts';
import { createRemoteEmoji } from '../../support/remoteEmojis.ts';

const exec = promisify(execFile);

describe('custom emojis', () => {
  let api: TestApi;
  let core: Core;
  let call: JsonClient;
  let dir: string;
  let token: string;

  async function admin(...argv: string[]): Promise<string[]> {
    const command = parseSiteCommand(argv);
    if (!command) throw new Error(`not a site command: ${argv.join(' ')}`);
    const lines: string[] = [];
    await command(core, (l) => lines.push(l));
    return lines;
  }

  beforeAll(async () => {
    api = await startTestApi({}, { mediaDir: true });
    ({ core, call } = api);
    dir = await mkdtemp(join(tmpdir(), 'fedisrv-emoji-'));
    await writeFile(join(dir, 'blobcat.png'), await png(128, 128));
    await writeFile(join(dir, 'party.gif'), await animatedGif());
    await writeFile(join(dir, 'big.png'), Buffer.concat([await png(64, 64), Buffer.alloc(300 * 1024)]));
    await writeFile(join(dir, 'text.png'), 'not an image at all');
    ({ token } = await createTestUser(core, { username: 'emojifan' }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await api?.close();
  });

  it('finds shortcodes the way Mastodon does', () => {
    expect(shortcodesIn(['hi :blobcat: and :party:!', ':blobcat:'])).toEqual(['blobcat', 'party']);
    expect(shortcodesIn(['a:blobcat:b', '::x::', ':a:', 'time 10:30:00', ':under_score:'])).toEqual(['under_score']);
  });

  it('adds PNG and animated GIF emojis and lists them with their category', async () => {
    expect((await call('GET', '/api/v1/custom_emojis')).body).toEqual([]); // cached as empty
    expect(await admin('emoji', 'add', 'blobcat', join(dir, 'blobcat.png'), '--category', 'Blobs')).toEqual(['OK']);
    await admin('emoji', 'add', 'party', join(dir, 'party.gif'), '--unlisted');
    const { status, body, headers } = await call('GET', '/api/v1/custom_emojis');
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toMatch(/public/);
    expect(body).toEqual([
      {
        shortcode: 'blobcat',
        url: expect.stringMatching(/\/system\/custom_emojis\/images\/\d+\/original\/[0-9a-f]+\.png$/),
        static_url: expect.stringMatching(/\/static\/[0-9a-f]+\.png$/),
        visible_in_picker: true,
        category: 'Blobs',
      },
      {
        shortcode: 'party',
        url: expect.stringMatching(/\.gif$/),
        static_url: expect.stringMatching(/\.png$/),
        visible_in_picker: false,
        category: null,
      },
    ]);
    const gif = await fetch(body[1].url.replace(core.config.baseUrl, api.server.url));
    expect(gif.headers.get('content-type')).toBe('image/gif');
    const still = await fetch(body[1].static_url.replace(core.config.baseUrl, api.server.url));
    expect(still.status).toBe(200);
    expect(still.headers.get('content-type')).toBe('image/png');
  });

  it('refuses bad shortcodes, duplicates, big files and non-images', async () => {
    await expect(admin('emoji', 'add', 'x', join(dir, 'blobcat.png'))).rejects.toThrow(/at least 2 characters/);
    await expect(admin('emoji', 'add', 'bad-name', join(dir, 'blobcat.png'))).rejects.toThrow(/alphanumeric/);
    await expect(admin('emoji', 'add', 'blobcat', join(dir, 'blobcat.png'))).rejects.toThrow(/already been taken/);
    await expect(admin('emoji', 'add', 'huge', join(dir, 'big.png'))).rejects.toThrow(/256 KB/);
    await expect(admin('emoji', 'add', 'texty', join(dir, 'text.png'))).rejects.toThrow(/PNG or GIF/);
    await expect(admin('emoji', 'modify', 'nothere', '--disable')).rejects.toThrow(/No custom emoji/);
    expect(() => parseSiteCommand(['emoji', 'modify', 'blobcat', '--disable', '--enable'])).toThrow(/together/);
  });

  it('statuses, display names and notes carry the emojis they use', async () => {
    const posted = await call('POST', '/api/v1/statuses', token, { status: 'Hello :blobcat: :party: :unknown:' });
    expect(posted.status).toBe(200);
    expect(posted.body.emojis.map((e: { shortcode: string }) => e.shortcode).sort()).toEqual(['blobcat', 'party']);
    expect(posted.body.emojis[0]).not.toHaveProperty('category');
    const cw = await call('POST', '/api/v1/statuses', token, { status: 'body', spoiler_text: 'CW :blobcat:' });
    expect(cw.body.emojis).toEqual([expect.objectContaining({ shortcode: 'blobcat', visible_in_picker: true })]);
    const poll = await call('POST', '/api/v1/statuses', token, {
      status: 'Vote',
      poll: { options: [':party: yes', 'no'], expires_in: 3600 },
    });
    expect(poll.body.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['party']);
    expect(poll.body.poll.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['party']);

    const profile = await call('PATCH', '/api/v1/accounts/update_credentials', token, {
      display_name: 'Fan :blobcat:',
      note: 'I like :party:',
    });
    expect(profile.status).toBe(200);
    expect(profile.body.emojis.map((e: { shortcode: string }) => e.shortcode).sort()).toEqual(['blobcat', 'party']);
    const fetched = await call('GET', `/api/v1/statuses/${posted.body.id}`, token);
    expect(fetched.body.account.emojis).toHaveLength(2);
  });

  it('federation: Notes and actors carry Emoji tags; /emojis/:id is the Emoji object', async () => {
    const { account } = await createTestUser(core, { username: 'federated' });
    await collection(core.db, accounts).updateOne({ _id: account._id }, { $set: { displayName: 'Fed :blobcat:' } });
    const actor = await renderLocalActor(core, (await collection(core.db, accounts).findOne({ _id: account._id }))!);
    const tag = (actor.tag as { type: string; name: string; id: string; icon: { url: string } }[])[0];
    expect(tag).toMatchObject({ type: 'Emoji', name: ':blobcat:', icon: { type: 'Image', mediaType: 'image/png' } });
    const posted = await call('POST', '/api/v1/statuses', token, { status: 'AP :party:' });
    const status = (await collection(core.db, statuses).findOne({ _id: BigInt(posted.body.id) }))!;
    const author = (await collection(core.db, accounts).findOne({ _id: status.accountId }))!;
    const note = await renderStatusObject(core, status, author);
    expect(note.tag).toContainEqual(expect.objectContaining({ type: 'Emoji', name: ':party:' }));

    const res = await fetch(tag.id.replace(core.config.baseUrl, api.server.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/activity\+json/);
    expect(await res.json()).toMatchObject({
      id: tag.id,
      type: 'Emoji',
      name: ':blobcat:',
      icon: { url: tag.icon.url },
    });
    expect((await fetch(`${api.server.url}/emojis/999999`)).status).toBe(404);
    expect((await fetch(`${api.server.url}/emojis/abc`)).status).toBe(404);
  });

  it('disabled emojis leave the list and the entities; removed ones are gone with their files', async () => {
    await admin('emoji', 'modify', 'party', '--disable');
    expect((await call('GET', '/api/v1/custom_emojis')).body.map((e: { shortcode: string }) => e.shortcode)).toEqual([
      'blobcat',
    ]);
    const posted = await call('POST', '/api/v1/statuses', token, { status: ':party: :blobcat:' });
    expect(posted.body.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['blobcat']);
    await admin('emoji', 'modify', 'party', '--enable', '--listed', '--category', 'Fun');
    expect((await call('GET', '/api/v1/custom_emojis')).body[1]).toMatchObject({
      shortcode: 'party',
      visible_in_picker: true,
      category: 'Fun',
    });

    const [blobcat] = (await call('GET', '/api/v1/custom_emojis')).body;
    await admin('emoji', 'remove', 'blobcat');
    expect((await call('GET', '/api/v1/custom_emojis')).body.map((e: { shortcode: string }) => e.shortcode)).toEqual([
      'party',
    ]);
    const gone = await fetch(blobcat.url.replace(core.config.baseUrl, api.server.url));
    expect(gone.status).toBe(404);
  });

  it('emoji import FILE.tar.gz works like tootctl emoji import (prefix, suffix, category, unlisted, overwrite)', async () => {
    const pack = join(dir, 'pack');
    await mkdir(pack);
    const long = 'l'.repeat(110); // a GNU long name in the archive
    await writeFile(join(pack, 'wave.png'), await png(32, 32));
    await writeFile(join(pack, 'dance.gif'), await animatedGif());
    await writeFile(join(pack, `${long}.png`), await png(16, 16));
    await writeFile(join(pack, '._wave.png'), 'macOS shadow file');
    await writeFile(join(pack, 'notes.txt'), 'not an emoji');
    await writeFile(join(pack, 'big.png'), Buffer.concat([await png(64, 64), Buffer.alloc(300 * 1024)]));
    await writeFile(join(pack, 'bad.png'), 'not an image at all');
    const archive = join(dir, 'pack.tar.gz');
    await exec('tar', ['-czf', archive, '-C', dir, 'pack']);

    const codes = ['pre_wave_suf', 'pre_dance_suf', `pre_${long}_suf`];
    const first = await admin(
      'emoji',
      'import',
      archive,
      '--prefix',
      'pre_',
      '--suffix',
      '_suf',
      '--category',
      'Pack',
      '--unlisted',
    );
    expect(first.at(-1)).toBe('Imported 3, skipped 0, failed to import 2');
    expect(first).toContain('Failure/Error: pack/big.png');
    expect(first).toContain('    Image must be less than 256 KB');
    expect(first).toContain('Failure/Error: pack/bad.png');
    expect(first).toContain('    Image must be a PNG or GIF');
    const listed = async () =>
      (
        (await call('GET', '/api/v1/custom_emojis')).body as {
          shortcode: string;
          url: string;
          category: string;
          visible_in_picker: boolean;
        }[]
      ).filter((e) => e.shortcode.startsWith('pre_'));
    const before = await listed();
    expect(before.map((e) => e.shortcode).sort()).toEqual([...codes].sort());
    for (const e of before) expect(e).toMatchObject({ category: 'Pack', visible_in_picker: false });
    const gif = before.find((e) => e.shortcode === 'pre_dance_suf')!;
    expect((await fetch(gif.url.replace(core.config.baseUrl, api.server.url))).headers.get('content-type')).toBe(
      'image/gif',
    );

    // Existing shortcodes (in any case) are skipped without --overwrite ...
    expect((await admin('emoji', 'import', archive, '--prefix', 'PRE_', '--suffix', '_SUF')).at(-1)).toBe(
      'Imported 0, skipped 3, failed to import 2',
    );
    // ... and replaced with it: same emoji (id), new image, the new category and visibility.
    const ids = async () =>
      (
        await collection(core.db, customEmojis)
          .find({ shortcode: { $in: codes } })
          .sort({ shortcode: 1 })
          .toArray()
      ).map((d) => d._id);
    const idsBefore = await ids();
    const over = await admin(
      'emoji',
      'import',
      archive,
      '--prefix',
      'pre_',
      '--suffix',
      '_suf',
      '--overwrite',
      '--category',
      'Other',
    );
    expect(over.at(-1)).toBe('Imported 3, skipped 0, failed to import 2');
    expect(await ids()).toEqual(idsBefore);
    const after = await listed();
    expect(after).toHaveLength(3);
    for (const e of after) expect(e).toMatchObject({ category: 'Other', visible_in_picker: true });
    const wave = (list: typeof after) => list.find((e) => e.shortcode === 'pre_wave_suf')!.url;
    expect(wave(after)).not.toBe(wave(before));
    expect((await fetch(wave(before).replace(core.config.baseUrl, api.server.url))).status).toBe(404);
    expect((await fetch(wave(after).replace(core.config.baseUrl, api.server.url))).status).toBe(200);

    // Not an archive: a clear error, nothing imported.
    await expect(admin('emoji', 'import', join(dir, 'blobcat.png'))).rejects.toThrow(/not a gzip file/);
    await expect(admin('emoji', 'import', join(dir, 'missing.tar.gz'))).rejects.toThrow(/Cannot read/);
  });

  it('copies a remote emoji to a local one and purges remote emojis (tootctl emoji purge --remote-only), then all', async () => {
    const storage = storageFor(core);
    const { id: farcat, imageKey: farcatImage } = await createRemoteEmoji(core, 'farcat', 'far.example', {
      cached: true,
    });
    const { id: unreachable } = await createRemoteEmoji(core, 'gone_far', 'far.example', { cached: false });
    const copy = await copyRemoteEmoji(core, farcat);
    expect(copy).toMatchObject({ shortcode: 'farcat', domain: null });
    expect(copy.imageKey).not.toBe('');
    expect(
      ((await call('GET', '/api/v1/custom_emojis')).body as { shortcode: string }[]).map((e) => e.shortcode),
    ).toContain('farcat');
    // The image cannot be had (far.example does not resolve here): a clear error, nothing made.
    await expect(copyRemoteEmoji(core, unreachable)).rejects.toThrow(/could not be fetched from far\.example/);
    expect(await collection(core.db, customEmojis).countDocuments({ shortcode: 'gone_far', domain: null })).toBe(0);

    const locals = await collection(core.db, customEmojis).countDocuments({ domain: null });
    expect(await admin('emoji', 'purge', '--remote-only')).toEqual(['OK, removed 2 custom emojis']);
    expect(await collection(core.db, customEmojis).countDocuments({ domain: { $ne: null } })).toBe(0);
    expect(await collection(core.db, customEmojis).countDocuments({ domain: null })).toBe(locals);
    expect(await storage.get(farcatImage)).toBeNull();
    expect(await admin('emoji', 'purge')).toEqual([`OK, removed ${locals} custom emojis`]);
    expect((await call('GET', '/api/v1/custom_emojis')).body).toEqual([]);
  });
});
