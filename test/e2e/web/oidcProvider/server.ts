// A real OpenID provider for the external log-in tests: the certified `oidc-provider` package with
// its development log-in and consent pages (any login name, any password), run as a child process
// (`node test/e2e/web/oidcProvider/server.ts <redirect_uri>...`) because it is ESM-only; it binds
// port 0 and prints its issuer. One
// confidential client `fedisrv` (secret `fedisrv-secret`) per redirect URI given, PKCE required.
// People: the login name typed picks the claims below; any other name gets a sub and nothing else.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Account, type ClientMetadata } from 'oidc-provider';

const redirectUris = process.argv.slice(2);
// Bound first (the issuer names the port), served once the provider exists.
const server = http.createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const PEOPLE: Record<string, Record<string, unknown>> = {
  dana: { preferred_username: 'dana', name: 'Dana Scully', email: 'dana@idp.test', email_verified: true },
  // The same username at the provider as dana's: the local one gets a suffix.
  dana2: {
    preferred_username: 'dana@elsewhere.test',
    name: 'Other Dana',
    email: 'dana2@idp.test',
    email_verified: true,
  },
  // An address the provider does not vouch for.
  uma: { preferred_username: 'uma', name: 'Uma', email: 'uma@idp.test', email_verified: false },
  vic: {
    preferred_username: 'vic.tor',
    given_name: 'Vic',
    family_name: 'Tor',
    email: 'vic@idp.test',
    email_verified: true,
  },
  wes: { preferred_username: 'wes', name: 'Wes', email: 'wes@idp.test', email_verified: true },
};

const clients: ClientMetadata[] = redirectUris.map((uri, i) => ({
  client_id: i === 0 ? 'fedisrv' : `fedisrv${i}`,
  client_secret: 'fedisrv-secret',
  redirect_uris: [uri],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
}));

const provider = new Provider(issuer, {
  clients,
  pkce: { required: () => true },
  cookies: { keys: ['test-cookie-key-not-secret'] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'preferred_username'],
  },
  features: { devInteractions: { enabled: true } },
  async findAccount(_ctx, id): Promise<Account> {
    return { accountId: id, claims: async () => ({ sub: id, ...(PEOPLE[id] ?? {}) }) };
  },
});
// Plain http on 127.0.0.1 is fine for a test provider.
provider.proxy = false;

server.on('request', provider.callback());
process.stdout.write(`oidc provider ready ${issuer}\n`);
