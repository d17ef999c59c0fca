// The Link header of a page (Mastodon's pagination): the request's own parameters kept, its cursors
// replaced, `limit` set, and the new cursor last.
import type { FastifyRequest } from 'fastify';
import type { Core } from '../../../services/core/context.ts';
import { linkHeader } from '../../../services/api/pagination.ts';

const core = { config: { baseUrl: 'https://example.test' } } as unknown as Core;
const at = (url: string) => ({ url }) as FastifyRequest;

describe('linkHeader', () => {
  it('keeps the other parameters and replaces the cursors', () => {
    const url = '/api/v1/timelines/public?local=true&max_id=900&limit=40&since_id=3';
    expect(linkHeader(core, at(url), { oldest: 100n, newest: 200n, count: 40, limit: 40 })).toBe(
      '<https://example.test/api/v1/timelines/public?local=true&limit=40&max_id=100>; rel="next", ' +
        '<https://example.test/api/v1/timelines/public?local=true&limit=40&min_id=200>; rel="prev"',
    );
  });

  it('adds the limit, leaves out next for a short page, and keeps encoded values encoded', () => {
    const url = '/api/v1/accounts/7/followers?tagged=caf%C3%A9+bar';
    expect(linkHeader(core, at(url), { oldest: 1n, newest: 2n, count: 3, limit: 20, prevParam: 'since_id' })).toBe(
      '<https://example.test/api/v1/accounts/7/followers?tagged=caf%C3%A9+bar&limit=20&since_id=2>; rel="prev"',
    );
  });

  it('is absent for an empty page', () => {
    expect(linkHeader(core, at('/api/v1/timelines/home'), { oldest: null, newest: null, count: 0, limit: 20 })).toBe(
      null,
    );
  });
});
