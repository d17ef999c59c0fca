import { isCrossOriginPath } from '../../../services/api/app.ts';

describe('isCrossOriginPath (Mastodon CORS resources)', () => {
  it.each([
    '/api/v1/statuses/1',
    '/api/v2/search',
    '/oauth/token',
    '/oauth/revoke',
    '/.well-known/webfinger',
    '/nodeinfo/2.0',
    '/users/alice',
    '/users/alice/statuses/1',
    '/@alice',
    '/@alice/1234',
    '/actor',
  ])('%s is open to other origins', (path) => expect(isCrossOriginPath(path)).toBe(true));

  it.each(['/oauth/authorize', '/auth/sign_in', '/oauth/authorize/native', '/settings/profile', '/'])(
    '%s is not',
    (path) => expect(isCrossOriginPath(path)).toBe(false),
  );
});
