// A remote actor's profile as this server reads it from a test server: the alt texts of its avatar
// and header (Mastodon 4.6 federates them as the Images' `name`), and its profile fields' links
// checked for rel="me" as Mastodon's VerifyAccountLinksWorker does for remote accounts (the
// link-previews pipeline, through the SSRF-safe client), shown as `verified_at` in the API; a
// refresh keeps a verification while the field's value stays the same.
import { testConfig } from '../support/config.ts';
import { closeTestCore, createTestCore, eventually, type TestCore } from '../support/core.ts';
import { startTestServer, type TestServer } from '../support/fixtures.ts';
import { consumerTuning } from '../support/kafka.ts';
import { resolveActor } from '../../services/core/activitypub/actors.ts';
import { runLinkPreviewsPipeline } from '../../pipelines/link-previews/index.ts';
import type { Pipeline } from '../../pipelines/runtime/index.ts';
import { LOOPBACK_FEDERATION } from './support.ts';
import { startMiniPeer, type MiniPeer, type PeerActor } from './miniPeer.ts';

jest.setTimeout(90_000);

describe('remote profiles', () => {
  let t: TestCore;
  let server: TestServer;
  let peer: MiniPeer;
  let pipeline: Pipeline;

  beforeAll(async () => {
    t = await createTestCore(testConfig(LOOPBACK_FEDERATION));
    server = await startTestServer(t.core);
    pipeline = await runLinkPreviewsPipeline(t.core, consumerTuning);
    peer = await startMiniPeer();
  });
  afterAll(async () => {
    await pipeline?.stop();
    await peer?.close();
    await server?.close();
    if (t) await closeTestCore(t.core);
  });

  /** A field value as Mastodon renders a link: the whole URL as the text, its scheme hidden. */
  const link = (url: string) => {
    const { protocol } = new URL(url);
    return `<a href="${url}" rel="me nofollow noopener" target="_blank"><span class="invisible">${protocol}//</span><span class="">${url.slice(protocol.length + 2)}</span><span class="invisible"></span></a>`;
  };
  const page = (body: string) => ({
    body: `<!DOCTYPE html><html><body>${body}</body></html>`,
    contentType: 'text/html',
  });
  const field = (name: string, value: string) => ({ type: 'PropertyValue', name, value });

  async function entity(
    id: bigint,
  ): Promise<Record<string, unknown> & { fields: { name: string; verified_at: string | null }[] }> {
    const res = await fetch(`${server.url}/api/v1/accounts/${id}`);
    expect(res.status).toBe(200);
    return (await res.json()) as never;
  }

  it('reads the alt texts of the avatar and header', async () => {
    const rae: PeerActor = peer.addActor('rae', {
      icon: { type: 'Image', mediaType: 'image/png', url: `${peer.url}/files/rae.png`, name: 'Rae at the beach' },
      image: { type: 'Image', mediaType: 'image/png', url: `${peer.url}/files/dunes.png`, name: 'Dunes\u0000 at noon' },
    });
    const account = await resolveActor(t.core, rae.uri);
    expect(account).not.toBeNull();
    expect(await entity(account!._id)).toMatchObject({
      avatar_description: 'Rae at the beach',
      header_description: 'Dunes at noon', // control characters dropped
    });
  });

  it('verifies the field links that link back with rel="me", and keeps a verification while the value stays', async () => {
    const profile = `${peer.url}/@sol`;
    peer.documents.set('/home', page(`<a rel="me" href="${profile}">Sol</a>`));
    peer.documents.set('/blog', page(`<a href="${profile}">no rel=me here</a>`));
    const sol = peer.addActor('sol', {
      attachment: [
        field('Home', link(`${peer.url}/home`)),
        field('Blog', link(`${peer.url}/blog`)),
        // Not a lone link whose text is its URL: never checked (Mastodon's extract_url_from_html).
        field('Other', `see <a href="${peer.url}/home">${peer.url}/home</a>`),
      ],
    });
    const account = await resolveActor(t.core, sol.uri);
    expect(account).not.toBeNull();
    /** The entity once field `i` is verified. */
    const onceVerified = (i: number) =>
      eventually(
        async () => {
          const e = await entity(account!._id);
          return e.fields[i]?.verified_at ? e : undefined;
        },
        30_000,
        `field ${i} verified`,
      );
    const verified = await onceVerified(0);
    expect(verified.fields.map((f) => [f.name, f.verified_at !== null])).toEqual([
      ['Home', true],
      ['Blog', false],
      ['Other', false],
    ]);
    const at = verified.fields[0].verified_at;

    // A refresh with the same Home value keeps its verification; a Blog that now links back gets one.
    peer.documents.set('/blog', page(`<link rel="me" href="${profile}">`));
    await resolveActor(t.core, sol.uri, { refresh: true });
    const both = await onceVerified(1);
    expect(both.fields[0].verified_at).toBe(at);

    // A changed value loses it until checked again (and this page does not link back).
    peer.documents.set('/elsewhere', page('<p>nothing</p>'));
    sol.document.attachment = [field('Home', link(`${peer.url}/elsewhere`)), field('Blog', link(`${peer.url}/blog`))];
    await resolveActor(t.core, sol.uri, { refresh: true });
    const after = await entity(account!._id);
    expect(after.fields.map((f) => [f.name, f.verified_at])).toEqual([
      ['Home', null],
      ['Blog', both.fields[1].verified_at],
    ]);
  });
});
