// The public pages as a logged-out visitor reads them, in Chromium (axe-core: no serious or
// critical violation) and over plain HTTP as link-preview bots and feed readers fetch them:
// landing, about, privacy policy, terms, profile (pinned, tabs, fields, suspended), status page
// (thread, CW in <details>, media with alt text, poll results, OpenGraph, oEmbed discovery), the
// embed page, hashtag page and the RSS feeds (parsed), the remote-interaction dialog, and the
// ActivityPub JSON at the same paths. Private posts never show.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { localRenderings, renderedStatusKey } from '../../../services/core/statuses/renderCache.ts';
import { describeWithBrowser, launchChromium } from '../../support/browser.ts';
import { seriousAxeViolations } from '../../support/axe.ts';
import type { Core } from '../../../services/core/context.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { createTestUser, startTestServer, type TestServer, type TestUser } from '../../support/fixtures.ts';
import { addRule } from '../../../services/core/instance/rules.ts';
import { png } from '../../support/mediaFiles.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { accounts } from '../../../services/core/model/accounts.ts';
import { setInstanceSettings } from '../../../services/core/instance/settings.ts';
import { invalidateInstanceCache } from '../../../services/core/instance/cache.ts';
import { setFeedAccess } from '../../../services/core/settings/feedAccess.ts';
import { updateProfile } from '../../../services/core/accounts/profile.ts';

// Starting the server and Chromium takes long on a loaded machine: hooks and tests get 5 minutes.
jest.setTimeout(300_000);

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'var', 'screenshots');

describeWithBrowser('publicPages.test.ts')('public pages (Chromium and plain HTTP)', () => {
  let core: Core;
  let server: TestServer;
  let browser: Browser;
  let alice: TestUser;
  let bob: TestUser;
  let root: { id: string; url: string };
  let reply: { id: string };
  let privatePost: { id: string };
  let tagName: string;

  async function api(user: TestUser, path: string, body: unknown, method = 'POST'): Promise<Record<string, unknown>> {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  async function upload(user: TestUser, description: string): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(await png(640, 480))], { type: 'image/png' }), 'picture.png');
    form.append('description', description);
    const res = await fetch(`${server.url}/api/v1/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}` },
      body: form,
    });
    const json = (await res.json()) as { id: string };
    if (res.status >= 300) throw new Error(`upload: ${res.status} ${JSON.stringify(json)}`);
    return json.id;
  }

  async function newPage(dark = false): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: 900, height: 900 },
      bypassCSP: true,
      colorScheme: dark ? 'dark' : 'light',
      javaScriptEnabled: true,
    });
    return context.newPage();
  }

  async function expectAccessible(page: Page, name: string): Promise<void> {
    const violations = await seriousAxeViolations(page);
    expect({ page: name, violations }).toEqual({ page: name, violations: [] });
  }

  const local = (url: string): string => {
    const u = new URL(url);
    return `${server.url}${u.pathname}${u.search}`;
  };

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ core } = await createTestCore(testConfig()));
    server = await startTestServer(core);
    await addRule(core, { text: 'Be kind to each other', hint: 'No harassment, no hate.' });
    alice = await createTestUser(core);
    bob = await createTestUser(core);
    await collection(core.db, accounts).updateOne(
      { _id: alice.account._id },
      {
        $set: {
          displayName: 'Alice Example',
          note: '<p>I write about <a href="https://example.org/">gardens</a>.</p>',
          fields: [{ name: 'Site', value: '<a href="https://example.org/">example.org</a>', verifiedAt: new Date() }],
        },
      },
    );
    tagName = `gardening${Date.now() % 100000}`;
    const mediaId = await upload(alice, 'A red tulip in the morning sun');
    const first = await api(alice, '/api/v1/statuses', {
      status: `Spring is here #${tagName}`,
      media_ids: [mediaId],
    });
    root = { id: first.id as string, url: first.url as string };
    await api(alice, `/api/v1/statuses/${root.id}/pin`, {});
    const second = await api(bob, '/api/v1/statuses', {
      status: `@${alice.account.username} Which tulips? #${tagName}`,
      in_reply_to_id: root.id,
      spoiler_text: 'Flower talk',
      poll: { options: ['Red ones', 'Yellow ones'], expires_in: 3600 },
    });
    reply = { id: second.id as string };
    privatePost = {
      id: (await api(alice, '/api/v1/statuses', { status: 'secret plans', visibility: 'private' })).id as string,
    };
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (core) await closeTestCore(core);
  });

  it('landing, about, privacy policy and terms show the server, its rules and statistics', async () => {
    await setInstanceSettings(core, {
      siteShortDescription: 'A server for gardeners',
      siteExtendedDescription: 'We talk about plants.',
      termsOfService: 'Be nice or leave.',
      showDomainBlocks: 'all',
    });
    await invalidateInstanceCache(core);
    const page = await newPage();
    const res = await page.goto(`${server.url}/`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()['cache-control']).toContain('public');
    await expect(page.locator('h1').textContent()).resolves.toBeTruthy();
    await expect(page.locator('body').textContent()).resolves.toContain('A server for gardeners');
    await expect(page.locator('ol.rules').textContent()).resolves.toContain('Be kind to each other');
    await expect(page.locator('dl.stats').textContent()).resolves.toContain('Users');
    await expect(page.getByRole('link', { name: 'Log in' }).count()).resolves.toBe(1);
    await expectAccessible(page, 'landing');
    await page.screenshot({ path: join(SCREENSHOTS, 'public-landing.png'), fullPage: true });

    await Promise.all([page.waitForURL('**/about'), page.getByRole('link', { name: 'About', exact: true }).click()]);
    await expect(page.locator('.prose').textContent()).resolves.toContain('We talk about plants.');
    await expect(page.locator('body').textContent()).resolves.toContain('No servers are moderated.');
    await expectAccessible(page, 'about');

    await Promise.all([
      page.waitForURL('**/privacy-policy'),
      page.getByRole('link', { name: 'Privacy policy' }).click(),
    ]);
    await expect(page.locator('h1').textContent()).resolves.toBe('Privacy policy');
    await Promise.all([page.waitForURL('**/terms'), page.getByRole('link', { name: 'Terms of service' }).click()]);
    await expect(page.locator('.prose').textContent()).resolves.toContain('Be nice or leave.');
    await expectAccessible(page, 'terms');
    await page.context().close();
  });

  it("the profile page is laid out by the public pages' part of the one style sheet", async () => {
    const css = await (await fetch(`${server.url}/web/style.css`)).text();
    expect(css).toContain('prefers-color-scheme'); // the shared styles
    expect(css).toContain('main.wide'); // the public pages' styles
    const page = await newPage();
    await page.goto(`${server.url}/@${alice.account.username}`);
    // The public pages' rounded avatars (8px), which the shared styles do not give.
    const radius = await page.$eval(
      'img.avatar',
      (m) =>
        (globalThis as unknown as { getComputedStyle(e: unknown): { borderRadius: string } }).getComputedStyle(m)
          .borderRadius,
    );
    expect(radius).toBe('8px');
    await page.close();
  });

  it('the profile shows header, bio, verified field, pinned post and posts; never private ones', async () => {
    const page = await newPage();
    const res = await page.goto(`${server.url}/@${alice.account.username}`);
    expect(res!.status()).toBe(200);
    expect(res!.headers()['vary']).toContain('Accept');
    await expect(page.locator('h1').textContent()).resolves.toBe('Alice Example');
    await expect(page.locator('.bio').textContent()).resolves.toContain('I write about gardens');
    await expect(page.locator('dl.fields .verified dt').textContent()).resolves.toBe('Site');
    await expect(page.locator('#pinned-heading + article').textContent()).resolves.toContain('Spring is here');
    const body = await page.locator('main').textContent();
    expect(body).not.toContain('secret plans');
    // Bob's reply is on the "posts and replies" tab only (it is a reply to someone else).
    await Promise.all([
      page.waitForURL('**/with_replies'),
      page.getByRole('link', { name: 'Posts and replies' }).click(),
    ]);
    await expectAccessible(page, 'profile with replies');
    await page.goto(`${server.url}/@${alice.account.username}`);
    await expectAccessible(page, 'profile');
    await page.screenshot({ path: join(SCREENSHOTS, 'public-profile.png'), fullPage: true });
    const dark = await newPage(true);
    await dark.goto(`${server.url}/@${alice.account.username}`);
    await expectAccessible(dark, 'profile (dark)');
    await dark.context().close();
    await page.context().close();
  });

  it('the status page shows the thread, media with alt text, the CW in <details> and poll results', async () => {
    const page = await newPage();
    const res = await page.goto(`${server.url}/@${bob.account.username}/${reply.id}`);
    expect(res!.status()).toBe(200);
    // The ancestor (alice's post) comes first, with its image and alt text.
    await expect(page.locator('section.ancestors article').textContent()).resolves.toContain('Spring is here');
    await expect(page.locator('section.ancestors img[alt="A red tulip in the morning sun"]').count()).resolves.toBe(1);
    // The content warning hides the text until opened, without script.
    const details = page.locator('article.main-status details.cw');
    await expect(details.locator('summary').textContent()).resolves.toContain('Flower talk');
    await expect(page.locator('article.main-status .content').isVisible()).resolves.toBe(false);
    await details.locator('summary').click();
    await expect(page.locator('article.main-status .content').isVisible()).resolves.toBe(true);
    await expect(page.locator('article.main-status .poll').textContent()).resolves.toContain('Red ones');
    await expectAccessible(page, 'status');
    await page.screenshot({ path: join(SCREENSHOTS, 'public-status.png'), fullPage: true });

    // The root post's page lists the reply below it.
    await page.goto(`${server.url}/@${alice.account.username}/${root.id}`);
    await expect(page.locator('section.descendants').textContent()).resolves.toContain('Flower talk');
    await expectAccessible(page, 'status with replies');
    await page.context().close();
  });

  it('a logged-out status page is served from the rendered-status cache the API uses', async () => {
    // Another author: alice's posts are counted by the feed tests.
    const carol = await createTestUser(core);
    const post = await api(carol, '/api/v1/statuses', { status: 'Popular post about compost' });
    const id = BigInt(post.id as string);
    const pagePath = `/@${carol.account.username}/${post.id as string}`;
    expect((await fetch(`${server.url}${pagePath}`)).status).toBe(200);
    const cached = await core.redis.get(renderedStatusKey(id));
    expect(cached).toBeTruthy();
    // The cached rendering is changed behind the server's back (and this process's few-second
    // copy dropped): the page and the API both show the change, so neither rendered it again.
    const shell = JSON.parse(cached!) as { s: { content: string } };
    shell.s.content = '<p>served from the cache</p>';
    await core.redis.set(renderedStatusKey(id), JSON.stringify(shell), 'KEEPTTL');
    localRenderings.get(core.db)?.delete(id);
    const html = await (await fetch(`${server.url}${pagePath}`)).text();
    expect(html).toContain('served from the cache');
    expect(html).not.toContain('compost');
    const json = (await (await fetch(`${server.url}/api/v1/statuses/${post.id as string}`)).json()) as {
      content: string;
    };
    expect(json.content).toBe('<p>served from the cache</p>');
  });

  it('a link-preview bot finds OpenGraph and Twitter meta and the oEmbed link; oEmbed and the embed page answer', async () => {
    const res = await fetch(`${server.url}/@${alice.account.username}/${root.id}`, {
      headers: { 'user-agent': 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toMatch(/public/);
    const html = await res.text();
    const meta = (attr: string, name: string): string | null => {
      const m = new RegExp(`<meta ${attr}="${name.replace(/[.:]/g, '\\$&')}" content="([^"]*)"`).exec(html);
      return m ? m[1] : null;
    };
    expect(meta('property', 'og:type')).toBe('article');
    expect(meta('property', 'og:title')).toContain('Alice Example');
    expect(meta('property', 'og:url')).toBe(root.url);
    expect(meta('property', 'og:description')).toContain('Spring is here');
    expect(meta('property', 'og:image')).toMatch(/^https?:\/\/.+/);
    expect(meta('property', 'og:image:alt')).toBe('A red tulip in the morning sun');
    expect(meta('name', 'twitter:card')).toBe('summary_large_image');
    expect(meta('name', 'robots')).toBe('all');
    const oembedLink = /<link rel="alternate" type="application\/json\+oembed" href="([^"]+)"/.exec(html)?.[1];
    expect(oembedLink).toBeDefined();

    const oembed = await fetch(local(oembedLink!.replace(/&amp;/g, '&')));
    expect(oembed.status).toBe(200);
    const doc = (await oembed.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      type: 'rich',
      version: '1.0',
      author_name: 'Alice Example',
      provider_name: core.config.localDomain,
      cache_age: 86400,
      width: 400,
      height: null,
    });
    const src = /<iframe src="([^"]+)"/.exec(doc.html as string)?.[1];
    expect(src).toBe(`${root.url}/embed`);
    const embed = await fetch(local(src!));
    expect(embed.status).toBe(200);
    expect(embed.headers.get('x-frame-options')).toBeNull();
    expect(embed.headers.get('content-security-policy')).toContain('frame-ancestors *');
    expect(await embed.text()).toContain('Spring is here');

    // A private post has no page, no oEmbed and no embed.
    const hidden = `${core.config.baseUrl}/@${alice.account.username}/${privatePost.id}`;
    expect((await fetch(local(hidden))).status).toBe(404);
    expect((await fetch(`${server.url}/api/oembed?url=${encodeURIComponent(hidden)}`)).status).toBe(404);
    expect((await fetch(`${server.url}/api/oembed?url=https%3A%2F%2Felsewhere.example%2F%401%2F1`)).status).toBe(404);
  });

  it('an account that opts out of search engines: its profile and post pages carry noindex', async () => {
    const robots = async (path: string) => {
      const html = await (await fetch(`${server.url}${path}`)).text();
      return /<meta name="robots" content="([^"]*)"/.exec(html)?.[1] ?? null;
    };
    const replyPage = `/@${bob.account.username}/${reply.id}`;
    expect(await robots(replyPage)).toBe('all');
    const doc = await collection(core.db, accounts).findOne({ _id: bob.account._id });
    await updateProfile(core, doc!, bob.user, { noindex: true });
    expect(await robots(`/@${bob.account.username}`)).toBe('noindex, noarchive');
    expect(await robots(replyPage)).toBe('noindex, noarchive');
    const entity = (await (await fetch(`${server.url}/api/v1/accounts/${bob.account._id}`)).json()) as {
      noindex: boolean;
    };
    expect(entity.noindex).toBe(true);
  });

  it('ActivityPub clients still get the JSON documents at /@user and /@user/ID', async () => {
    const actor = await fetch(`${server.url}/@${alice.account.username}`, {
      headers: { accept: 'application/activity+json' },
    });
    expect(actor.headers.get('content-type')).toContain('application/activity+json');
    expect(((await actor.json()) as { type: string }).type).toBe('Person');
    const note = await fetch(`${server.url}/@${alice.account.username}/${root.id}`, {
      headers: { accept: 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"' },
    });
    expect(((await note.json()) as { type: string }).type).toBe('Note');
  });

  interface ParsedFeed {
    error: string | null;
    title: string;
    description: string;
    items: { link: string; description: string; categories: string[]; medium: string | null; alt: string | null }[];
  }

  /** The few DOM calls parseFeed makes (the test's types have no DOM library). */
  interface XmlElement {
    textContent: string | null;
    getAttribute(name: string): string | null;
    querySelector(selector: string): XmlElement | null;
    querySelectorAll(selector: string): ArrayLike<XmlElement>;
    getElementsByTagNameNS(ns: string, name: string): ArrayLike<XmlElement>;
  }

  /** The feed parsed by Chromium's XML parser (a well-formedness error fails). */
  async function parseFeed(page: Page, xml: string): Promise<ParsedFeed> {
    return page.evaluate((text) => {
      const Parser = (
        globalThis as unknown as { DOMParser: new () => { parseFromString(t: string, type: string): XmlElement } }
      ).DOMParser;
      const doc = new Parser().parseFromString(text, 'application/xml');
      const error = doc.querySelector('parsererror')?.textContent ?? null;
      const channel = doc.querySelector('rss > channel');
      const MEDIA = 'http://search.yahoo.com/mrss/';
      return {
        error,
        title: channel?.querySelector(':scope > title')?.textContent ?? '',
        description: channel?.querySelector(':scope > description')?.textContent ?? '',
        items: Array.from(doc.querySelectorAll('item')).map((item) => {
          const media = item.getElementsByTagNameNS(MEDIA, 'content')[0];
          return {
            link: item.querySelector('link')?.textContent ?? '',
            description: item.querySelector('description')?.textContent ?? '',
            categories: Array.from(item.querySelectorAll('category')).map((c) => c.textContent ?? ''),
            medium: media?.getAttribute('medium') ?? null,
            alt: media?.getElementsByTagNameNS(MEDIA, 'description')[0]?.textContent ?? null,
          };
        }),
      };
    }, xml);
  }

  it('RSS feeds of the account and of the hashtag parse, with items, media and categories', async () => {
    const page = await newPage();
    const res = await fetch(`${server.url}/@${alice.account.username}.rss`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/rss+xml');
    const feed = await parseFeed(page, await res.text());
    expect(feed.error).toBeNull();
    expect(feed.title).toBe('Alice Example');
    expect(feed.description).toBe(`Public posts from @${alice.account.username}@${core.config.localDomain}`);
    expect(feed.items).toHaveLength(1); // no private post, no reply
    expect(feed.items[0]).toMatchObject({
      link: root.url,
      categories: [tagName],
      medium: 'image',
      alt: 'A red tulip in the morning sun',
    });
    expect(feed.items[0].description).toContain('Spring is here');

    const tag = await fetch(`${server.url}/tags/${tagName}.rss`);
    const tagFeed = await parseFeed(page, await tag.text());
    expect(tagFeed.error).toBeNull();
    expect(tagFeed.title).toBe(`#${tagName}`);
    expect(tagFeed.items).toHaveLength(2);
    await page.context().close();
  });

  it('the hashtag page follows the feed-access settings', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/tags/${tagName}`);
    await expect(page.locator('article.status').count()).resolves.toBe(2);
    await expectAccessible(page, 'tag');
    await page.screenshot({ path: join(SCREENSHOTS, 'public-tag.png'), fullPage: true });
    await setFeedAccess(core, 'local_topic_feed_access', 'authenticated');
    await setFeedAccess(core, 'remote_topic_feed_access', 'authenticated');
    // Pages are publicly cacheable for 15 s (the browser keeps this one): a new URL, as a new visitor.
    await page.goto(`${server.url}/tags/${tagName}?visit=2`);
    await expect(page.locator('article.status').count()).resolves.toBe(0);
    await expect(page.locator('main').textContent()).resolves.toContain('only to signed-in users');
    await setFeedAccess(core, 'local_topic_feed_access', 'public');
    await setFeedAccess(core, 'remote_topic_feed_access', 'public');
    await page.context().close();
  });

  it('reply from your server: the dialog sends the visitor to their server’s authorize_interaction', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/@${alice.account.username}/${root.id}`);
    await Promise.all([page.waitForURL('**/interact?type=reply'), page.getByRole('link', { name: 'Reply' }).click()]);
    await expectAccessible(page, 'interact');
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith('https://remote.example/')),
      (async () => {
        await page.getByLabel('Your account or server').fill('carol@remote.example');
        await page.getByRole('button', { name: 'Go to your server' }).click();
      })(),
    ]);
    const target = new URL(request.url());
    expect(target.pathname).toBe('/authorize_interaction');
    expect(target.searchParams.get('uri')).toContain(`/statuses/${root.id}`);
    await page.context().close();
  });

  it('a suspended account shows as suspended; its posts are gone', async () => {
    const carol = await createTestUser(core);
    const post = await api(carol, '/api/v1/statuses', { status: 'before the ban' });
    await collection(core.db, accounts).updateOne({ _id: carol.account._id }, { $set: { suspendedAt: new Date() } });
    const page = await newPage();
    await page.goto(`${server.url}/@${carol.account.username}`);
    await expect(page.locator('main').textContent()).resolves.toContain('This account has been suspended.');
    await expect(page.locator('main').textContent()).resolves.not.toContain('before the ban');
    expect((await fetch(`${server.url}/@${carol.account.username}/${post.id as string}`)).status).toBe(410);
    await page.context().close();
  });
});
