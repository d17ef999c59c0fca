// Which replies job a stored remote status calls for (Mastodon's Create → FetchRepliesService
// with no synchronous requests): embedded first-page items, or the collection's id to fetch later.
import { firstPageRepliesJob, sameHostIds } from '../../../services/core/activitypub/replies/job.ts';

const status = { _id: 42n, uri: 'https://remote.example/users/a/statuses/1' };
const actor = 'https://remote.example/users/a';
const coll = `${status.uri}/replies`;

describe('firstPageRepliesJob', () => {
  it('takes up to 5 same-host items of an embedded first page', () => {
    const items = [
      ...Array.from({ length: 6 }, (_, i) => `https://remote.example/users/a/statuses/${10 + i}`),
      'https://elsewhere.example/notes/1',
    ];
    const job = firstPageRepliesJob(
      status,
      actor,
      {
        replies: {
          id: coll,
          type: 'Collection',
          first: { type: 'CollectionPage', items: ['https://elsewhere.example/x', ...items] },
        },
      },
      3,
    );
    expect(job?.payload).toEqual({
      statusId: '42',
      mode: 'first-page',
      collection: null,
      items: items.slice(0, 5),
      depth: 3,
      refreshKey: null,
    });
    expect(job?.key).toBe('remote.example');
  });

  it('reads embedded Note objects by their ids, and orderedItems', () => {
    const job = firstPageRepliesJob(
      status,
      actor,
      { replies: { first: { orderedItems: [{ id: 'https://remote.example/n/2', type: 'Note' }] } } },
      1,
    );
    expect(job?.payload.items).toEqual(['https://remote.example/n/2']);
  });

  it('queues the collection when it is a bare id or its first page is not embedded', () => {
    expect(firstPageRepliesJob(status, actor, { replies: coll }, 3)?.payload).toMatchObject({
      collection: coll,
      items: [],
    });
    expect(
      firstPageRepliesJob(status, actor, { replies: { id: coll, first: `${coll}?page=true` } }, 3)?.payload,
    ).toMatchObject({ collection: coll, items: [] });
  });

  it('asks for nothing: an empty embedded page, no replies, depth used up, a collection on another host', () => {
    expect(firstPageRepliesJob(status, actor, { replies: { id: coll, first: { items: [] } } }, 3)).toBeNull();
    expect(firstPageRepliesJob(status, actor, {}, 3)).toBeNull();
    expect(firstPageRepliesJob(status, actor, { replies: coll }, 0)).toBeNull();
    expect(firstPageRepliesJob(status, actor, { replies: 'https://evil.example/replies' }, 3)).toBeNull();
  });
});

describe('sameHostIds', () => {
  it('keeps http(s) ids on the reference host, up to the limit', () => {
    expect(
      sameHostIds(
        ['https://a.example/1', 'ftp://a.example/2', 'https://b.example/3', 'https://a.example/4'],
        'https://a.example/u',
        1,
      ),
    ).toEqual(['https://a.example/1']);
  });
});
