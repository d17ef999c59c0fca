// The HTML of the OAuth browser pages: log-in, consent, out-of-band code and errors. Every value
// is escaped; forms carry the CSRF token.
import { DANGEROUS_SCOPES } from '../../core/auth/scopes.ts';

export function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#191b22;color:#d9e1e8;display:flex;justify-content:center;padding:3em 1em}
main{max-width:28em;width:100%}h1{font-size:1.4em}label{display:block;margin:.8em 0 .3em}
input[type=email],input[type=password],input[type=text]{width:100%;padding:.6em;box-sizing:border-box;border-radius:4px;border:1px solid #444;background:#131419;color:inherit}
button{padding:.6em 1.2em;margin:1em .5em 0 0;border-radius:4px;border:0;background:#6364ff;color:#fff;font-size:1em;cursor:pointer}
button.secondary{background:#444}.error{background:#df405a33;padding:.6em;border-radius:4px}
.dangerous{border:1px solid #df405a;border-radius:4px;padding:.4em .8em}code{font-size:1.2em;word-break:break-all}
ul{padding-left:1.2em}li{margin:.3em 0}small{color:#9baec8}a{color:#8c8dff}`;

export function layout(title: string, body: string, lang = 'en'): string {
  return `<!DOCTYPE html>
<html lang="${escapeHtml(lang)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

function hidden(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n');
}

export function loginPage(opts: {
  csrf: string;
  returnTo: string;
  error?: string;
  email?: string;
  instance: string;
  lang: string;
}): string {
  return layout(
    `Log in - ${opts.instance}`,
    `<h1>Log in to ${escapeHtml(opts.instance)}</h1>
${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}
<form method="post" action="/auth/sign_in">
${hidden({ _csrf: opts.csrf, return_to: opts.returnTo })}
<label for="email">E-mail address</label>
<input id="email" type="email" name="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}">
<label for="password">Password</label>
<input id="password" type="password" name="password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>`,
    opts.lang,
  );
}

const SCOPE_DESCRIPTIONS: Record<string, string> = {
  read: 'Read all your account data',
  write: 'Modify all your account data',
  follow: 'Modify account relationships',
  push: 'Receive your push notifications',
  profile: 'Read only your account profile information',
  'read:accounts': 'See accounts information',
  'read:blocks': 'See your blocks',
  'read:bookmarks': 'See your bookmarks',
  'read:favourites': 'See your favorites',
  'read:filters': 'See your filters',
  'read:follows': 'See your follows',
  'read:lists': 'See your lists',
  'read:mutes': 'See your mutes',
  'read:notifications': 'See your notifications',
  'read:search': 'Search on your behalf',
  'read:statuses': 'See all posts',
  'write:accounts': 'Modify your profile',
  'write:blocks': 'Block accounts and domains',
  'write:bookmarks': 'Bookmark posts',
  'write:conversations': 'Mute and delete conversations',
  'write:favourites': 'Favorite posts',
  'write:filters': 'Create filters',
  'write:follows': 'Follow people',
  'write:lists': 'Create lists',
  'write:media': 'Upload media files',
  'write:mutes': 'Mute people and conversations',
  'write:notifications': 'Clear your notifications',
  'write:reports': 'Report other people',
  'write:statuses': 'Publish posts',
  'admin:read': 'Read all data on the server',
  'admin:write': 'Modify all data on the server',
};

function describe(scope: string): string {
  if (SCOPE_DESCRIPTIONS[scope]) return SCOPE_DESCRIPTIONS[scope];
  const m = /^admin:(read|write):(.+)$/.exec(scope);
  if (m)
    return `${m[1] === 'read' ? 'Read sensitive information of' : 'Perform moderation actions on'} all ${m[2].replace(/_/g, ' ')}`;
  return scope;
}

export function consentPage(opts: {
  csrf: string;
  appName: string;
  website: string | null;
  username: string;
  scopes: string[];
  params: Record<string, string>;
  instance: string;
  lang: string;
}): string {
  const normal = opts.scopes.filter((s) => !DANGEROUS_SCOPES.has(s));
  const dangerous = opts.scopes.filter((s) => DANGEROUS_SCOPES.has(s));
  const item = (s: string): string =>
    `<li><strong>${escapeHtml(describe(s))}</strong> <small>${escapeHtml(s)}</small></li>`;
  const site = opts.website
    ? ` (<a href="${escapeHtml(opts.website)}" rel="noopener noreferrer">${escapeHtml(opts.website)}</a>)`
    : '';
  return layout(
    `Authorization required - ${opts.instance}`,
    `<h1>Authorization required</h1>
<p><strong>${escapeHtml(opts.appName)}</strong>${site} would like permission to access your account <strong>@${escapeHtml(opts.username)}</strong>. It is a third-party application. If you do not trust it, then you should not authorize it.</p>
<h2>Review permissions</h2>
<ul id="scopes">${normal.map(item).join('')}</ul>
${dangerous.length ? `<div class="dangerous" id="dangerous-scopes"><h2>Dangerous: administrative access</h2><p>These permissions act on the whole server, not only on your account.</p><ul>${dangerous.map(item).join('')}</ul></div>` : ''}
<form method="post" action="/oauth/authorize">
${hidden({ _csrf: opts.csrf, ...opts.params })}
<button type="submit" name="decision" value="approve">Authorize</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
    opts.lang,
  );
}

export function codePage(code: string, instance: string): string {
  return layout(
    `Authorization code - ${instance}`,
    `<h1>Authorization code</h1><p>Copy this authorization code and paste it into the application.</p><p><code id="authorization-code" class="oauth-code">${escapeHtml(code)}</code></p>`,
  );
}

export function messagePage(title: string, message: string, lang = 'en'): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`, lang);
}
