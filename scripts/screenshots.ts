// Screenshots of the main account and public pages for the README (docs/screenshots/web-*.png and
// public-*.png), taken in the
// installed Chromium from a throw-away server on the local infrastructure (its own database, Redis
// namespace and topics, removed afterwards). Run by hand, not by `npm test`:
//   npm run screenshots [-- dark]
// Each page is shot 1024 px wide, at most 1400 px tall, and stored as a palette PNG.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { launchChromium } from '../test/support/browser.ts';
import { testConfig } from '../test/support/config.ts';
import { closeTestCore, createTestCore } from '../test/support/core.ts';
import { createTestUser, startTestServer } from '../test/support/fixtures.ts';
import { updateProfile } from '../services/core/accounts/profile.ts';
import { postStatus } from '../services/core/statuses/postStatus.ts';

const OUT = join(import.meta.dirname, '..', 'docs', 'screenshots');
const WIDTH = 1024;
const MAX_HEIGHT = 1400;
const scheme = process.argv[2] === 'dark' ? 'dark' : 'light';

/** [file name, path] of the pages shot once signed in. */
const SIGNED_IN_PAGES: [string, string][] = [
  ['web-profile', '/settings/profile'],
  ['web-preferences', '/settings/preferences'],
  ['web-notifications', '/settings/preferences/notifications'],
  ['web-two-factor', '/settings/two_factor_authentication_methods'],
  ['web-export', '/settings/export'],
  ['web-import', '/settings/imports'],
  ['web-migration', '/settings/migration'],
];

async function shoot(page: Page, name: string): Promise<void> {
  const raw = await page.screenshot({ fullPage: true, animations: 'disabled' });
  const image = sharp(raw);
  const { height = MAX_HEIGHT } = await image.metadata();
  const png = await image
    .extract({ left: 0, top: 0, width: WIDTH, height: Math.min(height, MAX_HEIGHT) })
    .png({ palette: true, quality: 80, compressionLevel: 9, effort: 10 })
    .toBuffer();
  const file = join(OUT, `${name}.png`);
  writeFileSync(file, png);
  console.log(`${file} (${Math.round(png.length / 1024)} KiB)`);
}

const { core } = await createTestCore(testConfig({ LOG_LEVEL: 'error', LOCAL_DOMAIN: 'social.example' }));
const server = await startTestServer(core);
const browser = await launchChromium();
try {
  mkdirSync(OUT, { recursive: true });
  const demo = await createTestUser(core, { username: 'river', email: 'river@social.example' });
  await updateProfile(core, demo.account, demo.user, {
    displayName: 'River Song',
    note: 'Archaeologist. Spoilers. #time',
    fields: [
      { name: 'Website', value: 'https://river.example' },
      { name: 'Pronouns', value: 'she/her' },
    ],
    avatarDescription: 'A woman with curly hair, smiling',
  });
  const post = await postStatus(core, demo.account, {
    text: 'Spoilers! The library has a whole planet to itself. #time',
  });
  await postStatus(core, demo.account, { text: 'Hello, sweetie. #time', inReplyToId: post._id });
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 900 }, colorScheme: scheme });
  // Pages name their images by the server's public address (LOCAL_DOMAIN): served from here.
  await context.route('https://social.example/**', async (route) => {
    const url = new URL(route.request().url());
    const res = await fetch(`${server.url}${url.pathname}${url.search}`);
    await route.fulfill({
      status: res.status,
      headers: Object.fromEntries(res.headers),
      body: Buffer.from(await res.arrayBuffer()),
    });
  });
  const page = await context.newPage();
  const suffix = scheme === 'dark' ? '-dark' : '';

  // What a logged-out visitor sees.
  for (const [name, path] of [
    ['public-landing', '/'],
    ['public-about', '/about'],
    ['public-profile', '/@river'],
    ['public-status', `/@river/${post._id}`],
    ['public-tag', '/tags/time'],
  ]) {
    await page.goto(`${server.url}${path}`);
    await shoot(page, `${name}${suffix}`);
  }

  await page.goto(`${server.url}/auth/sign_up`);
  await shoot(page, `web-sign-up${suffix}`);
  await page.goto(`${server.url}/auth/sign_in`);
  await shoot(page, `web-sign-in${suffix}`);
  await page.getByLabel('E-mail address').fill('river@social.example');
  await page.getByLabel('Password', { exact: true }).fill(demo.password);
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Log in', exact: true }).click()]);
  for (const [name, path] of SIGNED_IN_PAGES) {
    await page.goto(`${server.url}${path}`);
    await shoot(page, `${name}${suffix}`);
  }
  await context.close();
} finally {
  await browser.close();
  await server.close();
  await closeTestCore(core);
}
