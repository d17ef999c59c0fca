// The life of a post as the masto client library sees it, run as its own Node process (masto and
// its dependencies are ES modules, which jest's CommonJS runtime cannot load). Prints one JSON line
// with what it observed; masto.test.ts starts it against a live server and checks the result.
// Usage: node mastoFlow.ts <baseUrl> <aliceToken> <bobToken> <pngPath>
import { readFile } from 'node:fs/promises';
import { createRestAPIClient } from 'masto';

const [url, aliceToken, bobToken, pngPath] = process.argv.slice(2);
const a = createRestAPIClient({ url, accessToken: aliceToken });
const b = createRestAPIClient({ url, accessToken: bobToken });

const posted = await a.v1.statuses.create({ status: 'Hello #fediverse', spoilerText: 'greeting', language: 'en' });
const read = await b.v1.statuses.$select(posted.id).fetch();
const edited = await a.v1.statuses
  .$select(posted.id)
  .update({ status: 'Hello again', spoilerText: 'greeting', language: 'en' });
const history = await a.v1.statuses.$select(posted.id).history.list();
const reply = await b.v1.statuses.create({ status: 'hi back', inReplyToId: posted.id });
const context = await a.v1.statuses.$select(reply.id).context.fetch();
const favourited = (await b.v1.statuses.$select(posted.id).favourite()).favourited;
const reblog = await b.v1.statuses.$select(posted.id).reblog();
const bookmarked = (await b.v1.statuses.$select(posted.id).bookmark()).bookmarked;
const pinned = (await a.v1.statuses.$select(posted.id).pin()).pinned;
const favourites = await b.v1.favourites.list();
const media = await a.v1.media.create({
  file: new Blob([new Uint8Array(await readFile(pngPath))], { type: 'image/png' }),
  description: 'a test image',
});
const withMedia = await a.v1.statuses.create({ status: 'with a picture', mediaIds: [media.id] });
const withPoll = await a.v1.statuses.create({ status: 'which?', poll: { options: ['this', 'that'], expiresIn: 600 } });
const votedPoll = await b.v1.polls.$select(withPoll.poll?.id ?? '').votes.create({ choices: [1] });
const undone = {
  favourited: (await b.v1.statuses.$select(posted.id).unfavourite()).favourited,
  reblogged: (await b.v1.statuses.$select(posted.id).unreblog()).reblogged,
  bookmarked: (await b.v1.statuses.$select(posted.id).unbookmark()).bookmarked,
  pinned: (await a.v1.statuses.$select(posted.id).unpin()).pinned,
};
const deleted = await a.v1.statuses.$select(posted.id).remove();
const redraft = await a.v1.statuses.create({ status: deleted.text ?? '', spoilerText: deleted.spoilerText });
let goneStatus = 0;
try {
  await b.v1.statuses.$select(posted.id).fetch();
} catch (err) {
  goneStatus = (err as { statusCode?: number }).statusCode ?? -1;
}

process.stdout.write(
  `${JSON.stringify({
    posted: { id: posted.id, spoilerText: posted.spoilerText, sensitive: posted.sensitive, language: posted.language },
    readContent: read.content,
    editedAt: edited.editedAt,
    editedContent: edited.content,
    historyLength: history.length,
    ancestors: context.ancestors.map((s) => s.id),
    favourited,
    reblogOf: reblog.reblog?.id,
    reblogReblogged: reblog.reblog?.reblogged,
    bookmarked,
    pinned,
    favouriteIds: favourites.map((s) => s.id),
    undone,
    deletedText: deleted.text,
    redraft: { id: redraft.id, content: redraft.content, spoilerText: redraft.spoilerText },
    goneStatus,
    media: withMedia.mediaAttachments.map((m) => ({ id: m.id, description: m.description, type: m.type })),
    mediaId: media.id,
    poll: {
      options: withPoll.poll?.options.map((o) => o.title),
      votesAfterVote: votedPoll.votesCount,
      ownVotes: votedPoll.ownVotes,
    },
  })}\n`,
);
