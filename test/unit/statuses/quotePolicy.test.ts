// Quote policies and quote parsing as Mastodon 4.5 has them: the stored flags, who may quote under
// which policy, the outgoing and incoming `interactionPolicy.canQuote`, the quoted post an object
// names (FEP-044f first, then the legacy forms), and what a stamp must say to approve a quote.
import {
  QUOTE_POLICY_FLAGS,
  localStatusPolicy,
  needsFollowRelation,
  policyFromInteractionPolicy,
  policyKeys,
  presentQuoteApproval,
  quoteDecision,
} from '../../../services/core/quotes/policy.ts';
import { quotedUriOf, stampApproves } from '../../../services/core/quotes/ingress.ts';

const author = 1n;
const other = 2n;
const status = (policy: number, visibility: 'public' | 'private' | 'direct' = 'public') => ({
  accountId: author,
  visibility,
  reblogOfId: null,
  quoteApprovalPolicy: policy,
});

test('settings become automatic-approval flags; posts that are not public or unlisted get nobody', () => {
  expect(localStatusPolicy('public', 'public')).toBe(QUOTE_POLICY_FLAGS.public << 16);
  expect(localStatusPolicy('followers', 'unlisted')).toBe(QUOTE_POLICY_FLAGS.followers << 16);
  expect(localStatusPolicy('nobody', 'public')).toBe(0);
  expect(localStatusPolicy('public', 'private')).toBe(0);
  expect(localStatusPolicy('public', 'direct')).toBe(0);
  expect(policyKeys((QUOTE_POLICY_FLAGS.followers << 16) | QUOTE_POLICY_FLAGS.public, 'automatic')).toEqual([
    'followers',
  ]);
  expect(policyKeys((QUOTE_POLICY_FLAGS.followers << 16) | QUOTE_POLICY_FLAGS.public, 'manual')).toEqual(['public']);
});

test('who may quote: the author always, others by the automatic then the manual half', () => {
  const followers = localStatusPolicy('followers', 'public');
  expect(quoteDecision(status(0), author)).toBe('automatic');
  expect(quoteDecision(status(0), other)).toBe('denied');
  expect(quoteDecision(status(0), null)).toBe('denied');
  expect(quoteDecision(status(localStatusPolicy('public', 'public')), other)).toBe('automatic');
  expect(quoteDecision(status(followers), other, { follows: true })).toBe('automatic');
  expect(quoteDecision(status(followers), other, { follows: false })).toBe('denied');
  expect(quoteDecision(status(QUOTE_POLICY_FLAGS.public), other)).toBe('manual');
  expect(quoteDecision(status(QUOTE_POLICY_FLAGS.unsupported_policy << 16), other)).toBe('unknown');
  expect(quoteDecision(status(localStatusPolicy('public', 'public'), 'direct'), author)).toBe('denied');
  expect(quoteDecision({ ...status(QUOTE_POLICY_FLAGS.public << 16), reblogOfId: 9n }, other)).toBe('denied');
  expect(needsFollowRelation(status(followers), other)).toBe(true);
  expect(needsFollowRelation(status(followers), author)).toBe(false);
  expect(needsFollowRelation(status(localStatusPolicy('public', 'public')), other)).toBe(false);
  expect(presentQuoteApproval(status(followers), other, { follows: true })).toEqual({
    automatic: ['followers'],
    manual: [],
    current_user: 'automatic',
  });
});

test('incoming canQuote: Public forms, the followers and following collections, the author, others', () => {
  const actor = {
    uri: 'https://r.example/users/a',
    followersUrl: 'https://r.example/users/a/followers',
    followingUrl: 'https://r.example/users/a/following',
  };
  const parse = (canQuote: unknown) => policyFromInteractionPolicy({ canQuote }, actor);
  expect(parse({ automaticApproval: 'https://www.w3.org/ns/activitystreams#Public' })).toBe(
    QUOTE_POLICY_FLAGS.public << 16,
  );
  expect(parse({ automaticApproval: ['as:Public'], manualApproval: [actor.followersUrl] })).toBe(
    (QUOTE_POLICY_FLAGS.public << 16) | QUOTE_POLICY_FLAGS.followers,
  );
  expect(parse({ automaticApproval: [actor.uri] })).toBe(0);
  expect(parse({ automaticApproval: [actor.followingUrl] })).toBe(QUOTE_POLICY_FLAGS.following << 16);
  expect(parse({ manualApproval: ['https://elsewhere.example/users/x'] })).toBe(QUOTE_POLICY_FLAGS.unsupported_policy);
  expect(policyFromInteractionPolicy(undefined, actor)).toBe(0);
  expect(policyFromInteractionPolicy({ canQuote: 'nonsense' }, actor)).toBe(0);
});

test('the quoted post: FEP-044f quote (also inlined) first, then _misskey_quote, quoteUrl, quoteUri', () => {
  expect(quotedUriOf({ quote: 'https://a/1', quoteUri: 'https://a/2' })).toBe('https://a/1');
  expect(quotedUriOf({ quote: { id: 'https://a/3', type: 'Note' } })).toBe('https://a/3');
  expect(quotedUriOf({ _misskey_quote: 'https://a/4', quoteUrl: 'https://a/5' })).toBe('https://a/4');
  expect(quotedUriOf({ quoteUrl: ['https://a/5', 'https://a/6'] })).toBe('https://a/5');
  expect(quotedUriOf({ quoteUri: 'https://a/7' })).toBe('https://a/7');
  expect(quotedUriOf({ content: 'RE: https://a/8' })).toBeNull();
});

test('a stamp approves a quote only when it names both posts and comes from the quoted author', () => {
  const quoted = { uri: 'https://q.example/users/b/statuses/1' };
  const stampUri = 'https://q.example/users/b/quote_authorizations/9';
  const stamp = {
    id: stampUri,
    type: 'QuoteAuthorization',
    attributedTo: 'https://q.example/users/b',
    interactingObject: 'https://r.example/users/a/statuses/2',
    interactionTarget: quoted.uri,
  };
  const ok = (s: Record<string, unknown>, uri = stampUri) =>
    stampApproves(s, uri, 'https://r.example/users/a/statuses/2', quoted, 'https://q.example/users/b');
  expect(ok(stamp)).toBe(true);
  expect(ok({ ...stamp, type: 'Note' })).toBe(false);
  expect(ok({ ...stamp, interactingObject: 'https://r.example/users/a/statuses/3' })).toBe(false);
  expect(ok({ ...stamp, interactionTarget: 'https://q.example/users/b/statuses/4' })).toBe(false);
  expect(ok({ ...stamp, attributedTo: 'https://q.example/users/c' })).toBe(false);
  expect(ok(stamp, 'https://evil.example/stamp')).toBe(false);
});
