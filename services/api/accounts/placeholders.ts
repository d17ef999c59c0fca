// The default avatar and header images (Mastodon's …/original/missing.png), drawn once with sharp.
import sharp from 'sharp';

const cache = new Map<string, Promise<Buffer>>();

export function placeholderImage(kind: 'avatar' | 'header'): Promise<Buffer> {
  let image = cache.get(kind);
  if (!image) {
    const [width, height] = kind === 'avatar' ? [400, 400] : [1500, 500];
    image = sharp({ create: { width, height, channels: 3, background: kind === 'avatar' ? '#606984' : '#313543' } })
      .png()
      .toBuffer();
    cache.set(kind, image);
  }
  return image;
}
