import { loadConfig } from '../../../services/core/config.ts';
import { renderActor, renderInstanceActor } from '../../../services/core/activitypub/render/actor.ts';
import { audienceFor, renderNote } from '../../../services/core/activitypub/render/note.ts';
import {
  renderAccept,
  renderCreate,
  renderUndo,
  renderLike,
} from '../../../services/core/activitypub/render/activities.ts';
import { parseLocalUri, AS_PUBLIC } from '../../../services/core/activitypub/uris.ts';
import { isActivityPubMediaType, jsonDepthExceeds, parseJsonObject } from '../../../services/core/activitypub/json.ts';

const https = loadConfig({ NODE_ENV: 'test', LOCAL_DOMAIN: 'our.example' });
const http = loadConfig({ NODE_ENV: 'test', LOCAL_DOMAIN: 'localhost:3000', LOCAL_HTTPS: 'false' });

const account = {
  username: 'alice',
  displayName: 'Alice',
  note: '<p>hi</p>',
  fields: [{ name: 'Blog', value: '<a href="https://x">x</a>', verifiedAt: null }],
  locked: false,
  bot: false,
  discoverable: true,
  indexable: false,
  memorial: false,
  createdAt: new Date('2024-05-06T07:08:09Z'),
  publicKeyPem: 'PEM',
  suspendedAt: null,
};

describe('ActivityPub renderers', () => {
  it('renders an actor with Mastodon members and ids, http when LOCAL_HTTPS=false', () => {
    const doc = renderActor(https, {
      account,
      avatar: { url: 'https://our.example/a.png', mediaType: 'image/png' },
      header: null,
    });
    expect(doc).toMatchObject({
      id: 'https://our.example/users/alice',
      type: 'Person',
      inbox: 'https://our.example/users/alice/inbox',
      outbox: 'https://our.example/users/alice/outbox',
      followers: 'https://our.example/users/alice/followers',
      following: 'https://our.example/users/alice/following',
      featured: 'https://our.example/users/alice/collections/featured',
      featuredTags: 'https://our.example/users/alice/collections/tags',
      preferredUsername: 'alice',
      url: 'https://our.example/@alice',
      manuallyApprovesFollowers: false,
      published: '2024-05-06T00:00:00Z',
      publicKey: {
        id: 'https://our.example/users/alice#main-key',
        owner: 'https://our.example/users/alice',
        publicKeyPem: 'PEM',
      },
      endpoints: { sharedInbox: 'https://our.example/inbox' },
      icon: { type: 'Image', mediaType: 'image/png', url: 'https://our.example/a.png' },
      attachment: [{ type: 'PropertyValue', name: 'Blog', value: '<a href="https://x">x</a>' }],
    });
    expect((doc['@context'] as unknown[])[0]).toBe('https://www.w3.org/ns/activitystreams');
    expect(renderActor(http, { account: { ...account, bot: true }, avatar: null, header: null })).toMatchObject({
      id: 'http://localhost:3000/users/alice',
      type: 'Service',
    });
    expect(renderInstanceActor(https, 'PEM')).toMatchObject({ id: 'https://our.example/actor', type: 'Application' });
  });

  it('addresses notes by visibility', () => {
    const f = 'https://our.example/users/alice/followers';
    const m = ['https://remote.example/users/bob'];
    expect(audienceFor('public', f, m)).toEqual({ to: [AS_PUBLIC], cc: [f, ...m] });
    expect(audienceFor('unlisted', f, m)).toEqual({ to: [f], cc: [AS_PUBLIC, ...m] });
    expect(audienceFor('private', f, m)).toEqual({ to: [f], cc: m });
    expect(audienceFor('direct', f, m)).toEqual({ to: m, cc: [] });
  });

  it('renders a Question and its Create', () => {
    const note = renderNote(https, {
      status: {
        uri: 'https://our.example/users/alice/statuses/1',
        url: 'https://our.example/@alice/1',
        content: '<p>Best?</p>',
        spoilerText: '',
        sensitive: false,
        language: 'en',
        visibility: 'public',
        createdAt: new Date('2025-01-01T00:00:00Z'),
        editedAt: null,
        tags: [{ id: 1n, name: 'Tomato' }],
        favouritesCount: 2,
        reblogsCount: 1,
      },
      author: { uri: 'https://our.example/users/alice', followersUrl: 'https://our.example/users/alice/followers' },
      inReplyToUri: null,
      mentions: [{ uri: 'https://remote.example/users/bob', acct: 'bob@remote.example' }],
      attachments: [],
      poll: {
        poll: { options: ['a', 'b'], multiple: false, expiresAt: null, closedAt: null, votersCount: 3 },
        tallies: [2, 1],
      },
      conversation: null,
    });
    expect(note).toMatchObject({
      type: 'Question',
      contentMap: { en: '<p>Best?</p>' },
      oneOf: [
        { type: 'Note', name: 'a', replies: { type: 'Collection', totalItems: 2 } },
        { type: 'Note', name: 'b', replies: { type: 'Collection', totalItems: 1 } },
      ],
      tag: [
        { type: 'Mention', href: 'https://remote.example/users/bob', name: '@bob@remote.example' },
        { type: 'Hashtag', href: 'https://our.example/tags/tomato', name: '#Tomato' },
      ],
      likes: { totalItems: 2 },
    });
    const { '@context': _c, ...object } = note;
    void _c;
    const create = renderCreate(object, 'https://our.example/users/alice/statuses/1/activity');
    expect(create).toMatchObject({ type: 'Create', actor: 'https://our.example/users/alice', to: [AS_PUBLIC] });
    expect((create.object as Record<string, unknown>)['@context']).toBeUndefined();
  });

  it('renders Accept embedding the original Follow, Undo without the inner context', () => {
    const accept = renderAccept(
      'https://our.example/users/alice#accepts/follows/4',
      'https://our.example/users/alice',
      {
        id: 'https://remote.example/f/1',
        actor: 'https://remote.example/users/bob',
      },
    );
    expect(accept.object).toEqual({
      id: 'https://remote.example/f/1',
      type: 'Follow',
      actor: 'https://remote.example/users/bob',
      object: 'https://our.example/users/alice',
    });
    const undo = renderUndo('u', 'a', renderLike('l', 'a', 'o'));
    expect(undo.object).toEqual({ id: 'l', type: 'Like', actor: 'a', object: 'o' });
  });

  it('parses our own URLs', () => {
    expect(parseLocalUri(https, 'https://our.example/users/alice')).toEqual({ kind: 'actor', username: 'alice' });
    expect(parseLocalUri(https, 'https://our.example/users/alice/statuses/123')).toEqual({
      kind: 'status',
      username: 'alice',
      id: 123n,
    });
    expect(parseLocalUri(https, 'https://other.example/users/alice')).toBeNull();
    expect(parseLocalUri(https, 'https://our.example/%E0%A4%A')).toBeNull();
  });
});

describe('remote JSON', () => {
  it('limits nesting and accepts only AP media types', () => {
    expect(jsonDepthExceeds('['.repeat(100) + ']'.repeat(100), 32)).toBe(true);
    expect(jsonDepthExceeds('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', 32)).toBe(false);
    expect(parseJsonObject('{"a":' + '['.repeat(50) + ']'.repeat(50) + '}')).toBeNull();
    expect(parseJsonObject('[1]')).toBeNull();
    expect(isActivityPubMediaType('application/activity+json; charset=utf-8')).toBe(true);
    expect(isActivityPubMediaType('application/ld+json; profile="https://www.w3.org/ns/activitystreams"')).toBe(true);
    expect(isActivityPubMediaType('application/ld+json')).toBe(false);
    expect(isActivityPubMediaType('application/json')).toBe(false);
  });
});
