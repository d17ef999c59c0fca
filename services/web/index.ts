// The server-rendered pages (docs/adr/0008-page-stack.md): one Fastify plugin per page area,
// templates beside their plugin, one style sheet, messages from ./locales. Registered by the `api`
// role next to the API areas, so pages and API stay one process. Shared here: the session and
// CSRF cookies, the template engine, the security headers of every page, and an HTML error page
// for a refused form.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { Core } from '../core/context.ts';
import { registerView } from './view.ts';
import { CSP } from './csp.ts';
import { messagePage } from './pages.ts';
import oauthPages from './oauth/index.ts';
import authPages from './auth/index.ts';
import settingsPages from './settings/index.ts';
import preferencesPages from './settings/preferences.ts';
import featuredTagPages from './settings/featuredTags.ts';
import relationshipPages from './relationships/index.ts';
import twoFactorPages from './settings/twoFactor.ts';
import omniauthPages from './auth/omniauth.ts';
import securityKeyPages from './settings/securityKeys.ts';
import dataPages from './data/index.ts';
import movingPages from './moving/index.ts';
import filterPages from './filters/index.ts';
import publicPages from './public/index.ts';
import adminPages from './admin/index.ts';
import mailSubscriptionPages from './mailSubscriptions/index.ts';

export interface WebOptions {
  core: Core;
}

// The pages' one style sheet, kept in two files: the shared styles and the public pages'.
const STYLE = ['style.css', 'public/style.css']
  .map((file) => readFileSync(join(import.meta.dirname, file), 'utf8'))
  .join('\n');

// The one script of the pages (security keys need the browser's WebAuthn API; see csp.ts).
const WEBAUTHN_JS = readFileSync(join(import.meta.dirname, 'webauthn.js'), 'utf8');

const webPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const secure = core.config.localHttps;
  await app.register(cookie, { secret: core.config.secretKeyBase });
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: '_csrf_secret',
    cookieOpts: { signed: true, httpOnly: true, sameSite: 'lax', secure, path: '/' },
  });
  await registerView(app, process.env.NODE_ENV === 'production');

  app.addHook('onRequest', async (_request, reply) => {
    reply.headers({
      'cache-control': 'no-store',
      'content-security-policy': CSP,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'cross-origin-opener-policy': 'same-origin',
      'permissions-policy': 'camera=(), microphone=(), geolocation=(), interest-cohort=()',
    });
    if (secure) reply.header('strict-transport-security', 'max-age=63072000; includeSubDomains');
  });

  // A form without a valid CSRF token, and any other refused page request, gets a page, not JSON.
  app.setErrorHandler(async (err: FastifyError, request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) request.log.error({ err }, 'page failed');
    const csrfError = err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET';
    return messagePage(reply, core, {
      status,
      title: 'errors.title',
      lines: [
        csrfError
          ? 'errors.csrf'
          : status === 500
            ? 'errors.internal'
            : status === 404
              ? 'errors.not_found'
              : 'errors.bad_request',
      ],
      translate: true,
    });
  });

  app.get('/web/style.css', async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(STYLE),
  );

  app.get('/web/webauthn.js', async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/javascript; charset=utf-8').send(WEBAUTHN_JS),
  );

  await app.register(oauthPages, { core });
  await app.register(authPages, { core });
  await app.register(settingsPages, { core });
  await app.register(preferencesPages, { core });
  await app.register(featuredTagPages, { core });
  await app.register(relationshipPages, { core });
  await app.register(twoFactorPages, { core });
  await app.register(omniauthPages, { core });
  await app.register(securityKeyPages, { core });
  await app.register(dataPages, { core });
  await app.register(movingPages, { core });
  await app.register(filterPages, { core });
  await app.register(publicPages, { core });
  await app.register(adminPages, { core });
  await app.register(mailSubscriptionPages, { core });
};

export default webPages;
