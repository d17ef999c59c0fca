// The social graph as the masto client library uses it, run as its own Node process (masto is an
// ES module). Prints one JSON line with what it observed; masto.test.ts checks it.
// Usage: node mastoGraphFlow.ts <baseUrl> <lockedToken> <lockedId> <followerToken> <followerId>
import { createRestAPIClient } from 'masto';

const [url, lockedToken, lockedId, followerToken, followerId] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const owner = createRestAPIClient({ url, accessToken: lockedToken });
const fan = createRestAPIClient({ url, accessToken: followerToken });

const requested = await fan.v1.accounts.$select(lockedId).follow({ reblogs: false });
const requests = await owner.v1.followRequests.list();
const authorized = await owner.v1.followRequests.$select(followerId).authorize();
const [afterAuthorize] = await fan.v1.accounts.relationships.fetch({ id: [lockedId] });
const followers = await owner.v1.accounts.$select(lockedId).followers.list();
const unfollowed = await fan.v1.accounts.$select(lockedId).unfollow();
const blocked = await owner.v1.accounts.$select(followerId).block();
const blocks = await owner.v1.blocks.list();
const unblocked = await owner.v1.accounts.$select(followerId).unblock();
const muted = await owner.v1.accounts.$select(followerId).mute({ notifications: false, duration: 600 });
const mutes = await owner.v1.mutes.list();
const unmuted = await owner.v1.accounts.$select(followerId).unmute();
const noted = await owner.v1.accounts.$select(followerId).note.create({ comment: 'a fan' });
await owner.v1.domainBlocks.create({ domain: 'spam.example' });
const domainBlocks = await owner.v1.domainBlocks.list();
await owner.v1.domainBlocks.remove({ domain: 'spam.example' });
// Lists (the owner follows the fan for that) and followed hashtags.
await owner.v1.accounts.$select(followerId).follow();
// masto's types lack replies_policy and exclusive; the server takes them.
const listParams = { title: 'Fans', repliesPolicy: 'followed', exclusive: false };
const list = await owner.v1.lists.create(listParams);
await owner.v1.lists.$select(list.id).accounts.create({ accountIds: [followerId] });
const listMembers = await owner.v1.lists.$select(list.id).accounts.list();
const listsOfFan = await owner.v1.accounts.$select(followerId).lists.list();
const renamed = await owner.v1.lists.$select(list.id).update({ title: 'Best fans' });
await owner.v1.lists.$select(list.id).accounts.remove({ accountIds: [followerId] });
const emptied = await owner.v1.lists.$select(list.id).accounts.list();
await owner.v1.lists.$select(list.id).remove();
const listsAfter = await owner.v1.lists.list();
const tagFollowed = await fan.v1.tags.$select('Fediverse').follow();
const followedTags = await fan.v1.followedTags.list();
const tagUnfollowed = await fan.v1.tags.$select('fediverse').unfollow();

console.log(
  JSON.stringify({
    requested: {
      following: requested.following,
      requested: requested.requested,
      showingReblogs: requested.showingReblogs,
    },
    requests: requests.map((a) => a.id),
    authorized: { followedBy: authorized.followedBy, requestedBy: authorized.requestedBy },
    afterAuthorize: { following: afterAuthorize?.following, showingReblogs: afterAuthorize?.showingReblogs },
    followers: followers.map((a) => a.id),
    unfollowed: unfollowed.following,
    blocked: blocked.blocking,
    blocks: blocks.map((a) => a.id),
    unblocked: unblocked.blocking,
    muted: { muting: muted.muting, mutingNotifications: muted.mutingNotifications },
    muteExpires: mutes.map((a) => (a as { muteExpiresAt?: string | null }).muteExpiresAt ?? null),
    unmuted: unmuted.muting,
    note: noted.note,
    domainBlocks,
    list: {
      title: list.title,
      repliesPolicy: list.repliesPolicy,
      members: listMembers.map((a) => a.id),
      of: listsOfFan.map((l) => l.id),
    },
    renamed: renamed.title,
    emptied: emptied.length,
    listsAfter: listsAfter.length,
    tag: {
      followed: tagFollowed.following,
      list: followedTags.map((t) => t.name),
      unfollowed: tagUnfollowed.following,
    },
  }),
);
