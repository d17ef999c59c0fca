// Mastodon 4.6's feature policy (Account::InteractionPolicyConcern): the keys rendered and the
// outcome per viewer, and the canFeature an actor publishes or we read from a remote one.
import {
  featureApprovalFor,
  featurePolicyKeys,
  localCanFeature,
  parseCanFeature,
} from '../../../services/core/featuredCollections/featurePolicy.ts';

const PUBLIC = 'https://www.w3.org/ns/activitystreams#Public';
const local = (over: Partial<{ discoverable: boolean; locked: boolean }> = {}) => ({
  _id: 1n,
  domain: null,
  discoverable: true,
  locked: false,
  featurePolicy: null,
  ...over,
});
const remote = (automatic: string[], manual: string[] = []) => ({
  _id: 2n,
  domain: 'remote.example',
  discoverable: true,
  locked: false,
  featurePolicy: { automatic, manual } as never,
});

describe('feature policy', () => {
  test('local accounts: discoverable ones automatically, locked ones by followers, others nobody', () => {
    expect(featurePolicyKeys(local(), 'automatic')).toEqual(['public']);
    expect(featurePolicyKeys(local({ locked: true }), 'automatic')).toEqual(['followers']);
    expect(featurePolicyKeys(local({ discoverable: false }), 'automatic')).toEqual([]);
    expect(featurePolicyKeys(local(), 'manual')).toEqual([]);
    expect(featureApprovalFor(local(), 9n)).toBe('automatic');
    expect(featureApprovalFor(local({ discoverable: false }), 9n)).toBe('denied');
    expect(featureApprovalFor(local(), null)).toBe('denied');
  });

  test('remote accounts: by their published policy and the viewer relations', () => {
    expect(featureApprovalFor({ ...remote([]), featurePolicy: null }, 9n)).toBe('missing');
    expect(featureApprovalFor(remote([], []), 9n)).toBe('missing');
    expect(featureApprovalFor(remote(['public']), 9n)).toBe('automatic');
    expect(featureApprovalFor(remote([], ['public']), 9n)).toBe('manual');
    expect(featureApprovalFor(remote(['followers']), 9n)).toBe('denied');
    expect(featureApprovalFor(remote(['followers']), 9n, { viewerFollows: true, followsViewer: false })).toBe(
      'automatic',
    );
    expect(featureApprovalFor(remote([], ['following']), 9n, { viewerFollows: false, followsViewer: true })).toBe(
      'manual',
    );
    expect(featureApprovalFor(remote(['unsupported_policy']), 9n)).toBe('unknown');
    expect(featureApprovalFor(remote(['followers']), 2n)).toBe('automatic');
  });

  test("canFeature read from an actor's interactionPolicy", () => {
    const actor = {
      id: 'https://remote.example/users/a',
      followers: 'https://remote.example/users/a/followers',
      following: 'https://remote.example/users/a/following',
    };
    expect(parseCanFeature(actor)).toBeNull();
    expect(
      parseCanFeature({
        ...actor,
        interactionPolicy: {
          canFeature: {
            automaticApproval: [actor.followers, actor.id],
            manualApproval: ['as:Public', 'https://elsewhere.example/list'],
          },
        },
      }),
    ).toEqual({ automatic: ['followers'], manual: ['public', 'unsupported_policy'] });
    expect(parseCanFeature({ ...actor, interactionPolicy: { canFeature: { automaticApproval: actor.id } } })).toEqual({
      automatic: [],
      manual: [],
    });
  });

  test('the canFeature a local actor publishes', () => {
    const uris = { actor: 'A', followers: 'F' };
    expect(localCanFeature({ discoverable: true, locked: false }, uris, PUBLIC)).toEqual({
      automaticApproval: [PUBLIC],
    });
    expect(localCanFeature({ discoverable: true, locked: true }, uris, PUBLIC)).toEqual({ automaticApproval: ['F'] });
    expect(localCanFeature({ discoverable: false, locked: false }, uris, PUBLIC)).toEqual({ automaticApproval: ['A'] });
  });
});
