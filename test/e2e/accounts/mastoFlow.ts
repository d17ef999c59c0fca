// The accounts journey as the masto client library sees it, run as its own Node process (masto and
// its dependencies are ES modules, which jest's CommonJS runtime cannot load): it registers an app,
// obtains an app token and (after the browser log-in and consent) a user token, reads and updates
// the account. Prints one JSON line with what it observed; masto.test.ts checks it.
// Usage: node mastoFlow.ts <baseUrl> <email> <password>
import { createOAuthAPIClient, createRestAPIClient } from 'masto';
import { approve, authorizeUrl, Browser, logInAndReachConsent, pkcePair } from './browser.ts';

const [url, email, password] = process.argv.slice(2);
const redirectUri = 'https://masto.example/callback';

const anonymous = createRestAPIClient({ url });
const app = await anonymous.v1.apps.create({
  clientName: 'masto test',
  redirectUris: redirectUri,
  scopes: 'read write follow push',
  website: 'https://masto.example',
});
const clientId = app.clientId ?? '';
const clientSecret = app.clientSecret ?? '';

const oauth = createOAuthAPIClient({ url });
const appToken = await oauth.token.create({
  grantType: 'client_credentials',
  clientId,
  clientSecret,
  redirectUri,
  scope: 'read write',
});
const verifiedApp = await createRestAPIClient({ url, accessToken: appToken.accessToken }).v1.apps.verifyCredentials();

// The person authorizes in the browser; masto exchanges the code with the PKCE verifier.
const { verifier, challenge } = pkcePair();
const browser = new Browser(url);
const consent = await logInAndReachConsent(
  browser,
  authorizeUrl(
    { client_id: clientId, client_secret: clientSecret, id: '' },
    { redirectUri, scope: 'read write follow push', challenge },
  ),
  email,
  password,
);
const code = new URL(await approve(browser, consent)).searchParams.get('code') ?? '';
const userToken = await oauth.token.create({
  grantType: 'authorization_code',
  clientId,
  clientSecret,
  redirectUri,
  code,
  codeVerifier: verifier,
} as Parameters<typeof oauth.token.create>[0]);

const rest = createRestAPIClient({ url, accessToken: userToken.accessToken });
const me = await rest.v1.accounts.verifyCredentials();
const updated = await rest.v1.accounts.updateCredentials({
  displayName: 'Masto Alice',
  note: 'Written by masto.js',
  locked: true,
  fieldsAttributes: [{ name: 'Client', value: 'masto' }],
  source: { privacy: 'private', sensitive: false, language: 'en' },
});
const fetched = await rest.v1.accounts.$select(me.id).fetch();
const looked = await rest.v1.accounts.lookup({ acct: me.username });
const missing = await rest.v1.accounts
  .$select('987654321')
  .fetch()
  .then(
    () => 200,
    (err: { statusCode?: number }) => err.statusCode ?? 0,
  );

console.log(
  JSON.stringify({
    app: { name: app.name, hasClientId: clientId.length > 0, hasSecret: clientSecret.length > 0 },
    verifiedAppName: verifiedApp.name,
    appTokenScope: appToken.scope,
    userTokenScope: userToken.scope,
    me: { id: me.id, username: me.username, privacy: me.source.privacy, role: me.role?.id },
    updated: {
      displayName: updated.displayName,
      note: updated.note,
      locked: updated.locked,
      fields: updated.fields,
      privacy: updated.source.privacy,
    },
    fetchedDisplayName: fetched.displayName,
    lookedUpId: looked.id,
    missing,
  }),
);
