import { parseFocus, normalizeDescription } from '../../../services/core/media/attachments.ts';
import { formatLength, parseFrameRate } from '../../../services/core/media/ffmpeg.ts';
import { presentMediaAttachment } from '../../../services/core/entities/mediaAttachment.ts';
import type { Core } from '../../../services/core/context.ts';
import type { MediaAttachmentDoc } from '../../../services/core/model/media.ts';

describe('focus and description', () => {
  it('parses "x,y" within -1..1', () => {
    expect(parseFocus('0.5,-0.25')).toEqual({ x: 0.5, y: -0.25 });
    expect(parseFocus(' -1 , 1 ')).toEqual({ x: -1, y: 1 });
    expect(parseFocus('')).toBeNull();
    expect(parseFocus(undefined)).toBeNull();
    for (const bad of ['1.5,0', '0', 'a,b', '0,0,0', '0;0'])
      expect(() => parseFocus(bad)).toThrow(/Validation failed: Focus/);
    expect(() => parseFocus(3)).toThrow(/Focus is invalid/);
  });

  it('keeps descriptions up to 1500 characters (code points), "" means none', () => {
    expect(normalizeDescription('alt\r\ntext')).toBe('alt\ntext');
    expect(normalizeDescription('')).toBeNull();
    expect(normalizeDescription('😀'.repeat(1500))).toHaveLength(3000);
    expect(() => normalizeDescription('x'.repeat(1501))).toThrow(
      'Validation failed: Description is too long (maximum is 1500 characters)',
    );
    expect(() => normalizeDescription(['a'])).toThrow('Description is invalid');
  });
});

describe('ffmpeg helpers', () => {
  it('formats lengths like Mastodon', () => {
    expect(formatLength(88.65)).toBe('0:01:28.65');
    expect(formatLength(3725.5)).toBe('1:02:05.50');
    expect(formatLength(1.02)).toBe('0:00:01.02');
  });
  it('parses frame rates', () => {
    expect(parseFrameRate('30000/1001')).toBeCloseTo(29.97, 2);
    expect(parseFrameRate('25')).toBe(25);
    expect(parseFrameRate('0/0')).toBeNull();
    expect(parseFrameRate('x')).toBeNull();
  });
});

describe('MediaAttachment presenter', () => {
  const core = { config: { mediaDir: '/tmp/none', baseUrl: 'https://social.example' } } as unknown as Core;
  const base: MediaAttachmentDoc = {
    _id: 42n,
    accountId: 1n,
    statusId: null,
    scheduledStatusId: null,
    type: 'video',
    processing: 'complete',
    processingError: null,
    files: {
      original: 'media_attachments/files/42/original/ab.mp4',
      small: 'media_attachments/files/42/small/cd.jpg',
      contentType: 'video/mp4',
      upload: null,
      fileSize: 10,
    },
    meta: {
      original: {
        width: 320,
        height: 240,
        size: '320x240',
        aspect: 4 / 3,
        frameRate: '10/1',
        duration: 1.02,
        bitrate: 1000,
      },
      small: { width: 320, height: 240, size: '320x240', aspect: 4 / 3 },
      length: '0:00:01.02',
      duration: 1.02,
      fps: 10,
      audioEncode: 'aac',
      audioBitrate: '44100 Hz',
      audioChannels: 'mono',
    },
    description: null,
    blurhash: 'LKO2?U%2Tw=w]~RBVZRi};RPxuwH',
    remoteUrl: null,
    previewRemoteUrl: null,
    createdAt: new Date(),
    updatedAt: new Date(),
  };

  it('renders ids as strings, snake_case meta and URLs on the web domain', () => {
    expect(presentMediaAttachment(core, base)).toEqual({
      id: '42',
      type: 'video',
      url: 'https://social.example/system/media_attachments/files/42/original/ab.mp4',
      preview_url: 'https://social.example/system/media_attachments/files/42/small/cd.jpg',
      remote_url: null,
      preview_remote_url: null,
      text_url: null,
      meta: {
        original: {
          width: 320,
          height: 240,
          size: '320x240',
          aspect: 4 / 3,
          frame_rate: '10/1',
          duration: 1.02,
          bitrate: 1000,
        },
        small: { width: 320, height: 240, size: '320x240', aspect: 4 / 3 },
        length: '0:00:01.02',
        duration: 1.02,
        fps: 10,
        width: 320,
        height: 240,
        size: '320x240',
        aspect: 4 / 3,
        audio_encode: 'aac',
        audio_bitrate: '44100 Hz',
        audio_channels: 'mono',
      },
      description: null,
      blurhash: 'LKO2?U%2Tw=w]~RBVZRi};RPxuwH',
    });
  });

  it('has url null while processing', () => {
    const queued = presentMediaAttachment(core, {
      ...base,
      processing: 'queued',
      files: { ...base.files, small: null },
      meta: null,
      blurhash: null,
    });
    expect(queued).toMatchObject({ url: null, preview_url: null, meta: null });
  });
});
