// Media attachments in ActivityPub: ours as Documents (alt text as `name`, focalPoint, size,
// custom thumbnail as `icon`), remote ones read from hostile input into attachments.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Core } from '../../../services/core/context.ts';
import { createMediaAttachment } from '../../../services/core/media/attachments.ts';
import {
  attachmentToActivityPub,
  createRemoteAttachments,
  remoteAttachmentFrom,
} from '../../../services/core/media/activitypub.ts';
import { presentMediaAttachment } from '../../../services/core/entities/mediaAttachment.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser } from '../../support/fixtures.ts';
import { png, oggAudio } from '../../support/mediaFiles.ts';

describe('media attachments in ActivityPub', () => {
  let core: Core;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'media-ap-'));
    ({ core } = await createTestCore(
      testConfig({ MEDIA_DIR: dir, LOCAL_DOMAIN: 'social.example', LOCAL_HTTPS: 'true' }),
    ));
  });

  afterAll(async () => {
    if (core) await closeTestCore(core);
    await rm(dir, { recursive: true, force: true });
  });

  it('renders our attachments as Documents', async () => {
    const { account } = await createTestUser(core);
    const image = await createMediaAttachment(core, account._id, await png(120, 90), {
      synchronous: true,
      description: 'A green square',
      focus: '0,0.25',
    });
    expect(attachmentToActivityPub(core, image)).toEqual({
      type: 'Document',
      mediaType: 'image/png',
      url: expect.stringMatching(
        /^https:\/\/social\.example\/system\/media_attachments\/files\/\d+\/original\/[0-9a-f]+\.png$/,
      ),
      name: 'A green square',
      blurhash: image.blurhash,
      focalPoint: [0, 0.25],
      width: 120,
      height: 90,
    });
    const audio = await createMediaAttachment(core, account._id, await oggAudio(), {
      synchronous: true,
      thumbnail: await png(30, 30),
    });
    const doc = attachmentToActivityPub(core, audio);
    expect(doc).toMatchObject({
      mediaType: 'audio/mpeg',
      name: null,
      icon: { type: 'Image', mediaType: 'image/jpeg', url: expect.stringContaining('/thumbnail/') },
    });
  });

  it('reads remote attachments defensively', async () => {
    expect(remoteAttachmentFrom({ type: 'Document', url: 'javascript:alert(1)', mediaType: 'image/png' })).toBeNull();
    expect(remoteAttachmentFrom('https://x.example/a.png')).toBeNull();
    expect(
      remoteAttachmentFrom({
        type: 'Document',
        url: [{ type: 'Link', href: 'https://x.example/v.mp4', mediaType: 'video/mp4' }],
        summary: 'alt from summary',
        name: 'ignored',
        blurhash: 'nope',
        focalPoint: [2, -3],
      }),
    ).toMatchObject({
      type: 'video',
      mediaType: 'video/mp4',
      remoteUrl: 'https://x.example/v.mp4',
      description: 'alt from summary',
      blurhash: null,
      focus: { x: 1, y: -1 },
    });
    // A 9x9-component blurhash is refused (too costly to decode), a 4x3 one kept.
    expect(
      remoteAttachmentFrom({ url: 'https://x.example/a.png', mediaType: 'image/png', blurhash: '~' + 'A'.repeat(165) })
        ?.blurhash,
    ).toBeNull();

    const { account } = await createTestUser(core);
    const items = [
      {
        type: 'Document',
        mediaType: 'image/jpeg',
        url: 'https://remote.example/files/p1.jpg',
        name: 'Tomatoes',
        blurhash: 'UKF~gP%M00of~qj[M{WB4nt7-;Rj9Fay%MWB',
        focalPoint: [0, 0.25],
        width: 1600,
        height: 1200,
      },
      {
        type: 'Document',
        mediaType: 'application/pdf',
        url: 'https://remote.example/files/doc.pdf',
        name: 'x'.repeat(2000),
      },
      { type: 'Document', url: 'ftp://remote.example/nope' },
      ...Array.from({ length: 5 }, (_, i) => ({
        type: 'Document',
        mediaType: 'image/png',
        url: `https://remote.example/${i}.png`,
      })),
    ];
    const docs = await createRemoteAttachments(core, account._id, items);
    expect(docs).toHaveLength(4);
    expect(docs[1].description).toHaveLength(1500);
    // Not cached yet: our media proxy fetches it on first request (remoteCache.test.ts).
    expect(presentMediaAttachment(core, docs[0])).toMatchObject({
      type: 'image',
      url: `https://social.example/media_proxy/${docs[0]._id}/original`,
      preview_url: `https://social.example/media_proxy/${docs[0]._id}/small`,
      remote_url: 'https://remote.example/files/p1.jpg',
      description: 'Tomatoes',
      blurhash: 'UKF~gP%M00of~qj[M{WB4nt7-;Rj9Fay%MWB',
      meta: { original: { width: 1600, height: 1200, size: '1600x1200', aspect: 4 / 3 }, focus: { x: 0, y: 0.25 } },
    });
    expect(presentMediaAttachment(core, docs[1])).toMatchObject({
      type: 'unknown',
      url: 'https://remote.example/files/doc.pdf',
      preview_url: null,
    });
  });
});
