// Scheduled statuses: the REST endpoints (list, show, reschedule, cancel), the limits and the
// minimum delay, media held by a scheduled status, and publication exactly once — with concurrent
// schedulers and after crashes at each point between claim and clean-up.
import { createHash } from 'node:crypto';
import type { Core } from '../../../services/core/context.ts';
import type { OutboxEvent } from '../../../services/core/events/outbox.ts';
import { collection } from '../../../services/core/db/mongo.ts';
import { statuses } from '../../../services/core/model/statuses.ts';
import { mediaAttachments } from '../../../services/core/model/media.ts';
import { polls } from '../../../services/core/model/polls.ts';
import {
  scheduledStatuses,
  type ScheduledStatusDoc,
  type ScheduledStatusParams,
} from '../../../services/core/model/scheduledStatuses.ts';
import { createMediaAttachment } from '../../../services/core/media/attachments.ts';
import { postStatus } from '../../../services/core/statuses/postStatus.ts';
import { claimAttempt } from '../../../services/core/scheduledStatuses/claims.ts';
import {
  createScheduledStatus,
  publishDueScheduledStatuses,
  publicationKey,
  DAILY_LIMIT,
} from '../../../services/core/scheduledStatuses/scheduledStatuses.ts';
import { startTestApi, type TestApi } from '../../support/api.ts';
import { createTestUser, type TestUser } from '../../support/fixtures.ts';
import type { JsonClient } from '../../support/http.ts';
import { png } from '../../support/mediaFiles.ts';

const MIN_DELAY_S = 2;

function params(text: string, extra: Partial<ScheduledStatusParams> = {}): ScheduledStatusParams {
  return {
    text,
    spoilerText: '',
    sensitive: false,
    visibility: 'public',
    language: 'en',
    inReplyToId: null,
    mediaIds: [],
    poll: null,
    ...extra,
  };
}

describe('scheduled statuses', () => {
  let api: TestApi;
  let core: Core;
  let call: JsonClient;
  let alice: TestUser;
  let bob: TestUser;
  let published: OutboxEvent[];
  const later = (hours = 2) => new Date(Date.now() + hours * 3600_000);

  /** Their time has come: moves them a second into the past (creation refuses times that close). */
  async function makeDue(...docs: ScheduledStatusDoc[]): Promise<void> {
    await collection(core.db, scheduledStatuses).updateMany(
      { _id: { $in: docs.map((d) => d._id) } },
      { $set: { scheduledAt: new Date(Date.now() - 1000) } },
    );
  }

  beforeAll(async () => {
    api = await startTestApi({ SCHEDULED_STATUS_MIN_DELAY: String(MIN_DELAY_S) }, { mediaDir: true });
    ({ core, published, call } = api);
    alice = await createTestUser(core);
    bob = await createTestUser(core);
  });

  afterAll(() => api?.close());

  it('lists, shows, reschedules and cancels; media stay editable and are released on cancel', async () => {
    const media = await createMediaAttachment(core, alice.account._id, await png(40, 30), {
      synchronous: true,
      description: 'before',
    });
    const at = later(3);
    const doc = await createScheduledStatus(
      core,
      alice.account,
      params('Later, with a picture', { mediaIds: [media._id], sensitive: true, spoilerText: 'cw' }),
      at,
      {
        applicationId: alice.app._id,
        idempotencyKey: 'key-1',
      },
    );
    expect(
      published.some((e) => e.type === 'ScheduledStatusCreated' && e.payload.scheduledStatusId === String(doc._id)),
    ).toBe(true);
    expect((await collection(core.db, mediaAttachments).findOne({ _id: media._id }))?.scheduledStatusId).toBe(doc._id);

    const list = await call('GET', '/api/v1/scheduled_statuses', alice.token);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toEqual({
      id: String(doc._id),
      scheduled_at: at.toISOString(),
      params: {
        text: 'Later, with a picture',
        poll: null,
        media_ids: [String(media._id)],
        sensitive: true,
        spoiler_text: 'cw',
        visibility: 'public',
        in_reply_to_id: null,
        language: 'en',
        application_id: Number(alice.app._id),
        scheduled_at: null,
        idempotency: 'key-1',
        with_rate_limit: false,
        quoted_status_id: null,
        quote_approval_policy: null,
      },
      media_attachments: [expect.objectContaining({ id: String(media._id), type: 'image', description: 'before' })],
    });
    expect((await call('GET', '/api/v1/scheduled_statuses', bob.token)).body).toEqual([]);
    expect((await call('GET', `/api/v1/scheduled_statuses/${doc._id}`, bob.token)).status).toBe(404);
    expect((await call('GET', '/api/v1/scheduled_statuses', null)).status).toBe(401);

    // Alt text and focus of a scheduled status's media can still be edited.
    const edited = await call('PUT', `/api/v1/media/${media._id}`, alice.token, {
      description: 'after',
      focus: '0.1,0.2',
    });
    expect(edited.status).toBe(200);
    const shown = await call('GET', `/api/v1/scheduled_statuses/${doc._id}`, alice.token);
    expect(shown.body.media_attachments[0]).toMatchObject({
      description: 'after',
      meta: expect.objectContaining({ focus: { x: 0.1, y: 0.2 } }),
    });

    const tooSoon = await call('PUT', `/api/v1/scheduled_statuses/${doc._id}`, alice.token, {
      scheduled_at: new Date(Date.now() + 500).toISOString(),
    });
    expect(tooSoon.status).toBe(422);
    expect(tooSoon.body.error).toBe('Validation failed: Scheduled at The scheduled date must be in the future');
    expect(
      (await call('PUT', `/api/v1/scheduled_statuses/${doc._id}`, alice.token, { scheduled_at: 'tomorrow' })).status,
    ).toBe(422);
    const moved = later(5);
    const put = await call('PUT', `/api/v1/scheduled_statuses/${doc._id}`, alice.token, {
      scheduled_at: moved.toISOString(),
    });
    expect(put.status).toBe(200);
    expect(put.body.scheduled_at).toBe(moved.toISOString());
    // Nothing to change is not an error (Mastodon permits only scheduled_at and updates with what it got).
    const unchanged = await call('PUT', `/api/v1/scheduled_statuses/${doc._id}`, alice.token, {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.scheduled_at).toBe(moved.toISOString());
    expect(
      (await call('PUT', `/api/v1/scheduled_statuses/${doc._id}`, bob.token, { scheduled_at: moved.toISOString() }))
        .status,
    ).toBe(404);

    expect((await call('DELETE', `/api/v1/scheduled_statuses/${doc._id}`, bob.token)).status).toBe(404);
    const del = await call('DELETE', `/api/v1/scheduled_statuses/${doc._id}`, alice.token);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({});
    expect((await call('GET', `/api/v1/scheduled_statuses/${doc._id}`, alice.token)).status).toBe(404);
    expect((await collection(core.db, mediaAttachments).findOne({ _id: media._id }))?.scheduledStatusId).toBeNull();
  });

  it('is created by POST /api/v1/statuses with scheduled_at, once per Idempotency-Key', async () => {
    const erin = await createTestUser(core);
    const at = later(4).toISOString();
    const body = {
      status: 'Scheduled over HTTP',
      scheduled_at: at,
      visibility: 'unlisted',
      poll: { options: ['a', 'b'], expires_in: 900 },
    };
    const first = await call('POST', '/api/v1/statuses', erin.token, body, { 'idempotency-key': 'same-compose' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      scheduled_at: at,
      params: {
        text: 'Scheduled over HTTP',
        visibility: 'unlisted',
        poll: { options: ['a', 'b'], expires_in: '900', multiple: false, hide_totals: false },
        idempotency: 'same-compose',
      },
      media_attachments: [],
    });
    const again = await call('POST', '/api/v1/statuses', erin.token, body, { 'idempotency-key': 'same-compose' });
    expect(again.body.id).toBe(first.body.id);
    expect(await collection(core.db, scheduledStatuses).countDocuments({ accountId: erin.account._id })).toBe(1);
    const tooSoon = await call('POST', '/api/v1/statuses', erin.token, {
      status: 'x',
      scheduled_at: new Date(Date.now() + 1000).toISOString(),
    });
    expect(tooSoon.status).toBe(422);
    expect(tooSoon.body.error).toBe('Validation failed: Scheduled at The scheduled date must be in the future');
    const badPoll = await call('POST', '/api/v1/statuses', erin.token, {
      status: 'x',
      scheduled_at: at,
      poll: { options: ['only'], expires_in: 900 },
    });
    expect(badPoll.status).toBe(422);
    // Nothing was posted yet.
    expect(await collection(core.db, statuses).countDocuments({ accountId: erin.account._id })).toBe(0);
  });

  it('paginates with Link headers', async () => {
    const carol = await createTestUser(core);
    const docs = [];
    for (let i = 0; i < 3; i++)
      docs.push(await createScheduledStatus(core, carol.account, params(`p${i}`), later(1 + i)));
    const first = await call('GET', '/api/v1/scheduled_statuses?limit=2', carol.token);
    expect(first.body.map((s: { id: string }) => s.id)).toEqual([String(docs[2]._id), String(docs[1]._id)]);
    expect(first.headers.get('link')).toContain(`max_id=${docs[1]._id}>; rel="next"`);
    const next = await call('GET', `/api/v1/scheduled_statuses?limit=2&max_id=${docs[1]._id}`, carol.token);
    expect(next.body.map((s: { id: string }) => s.id)).toEqual([String(docs[0]._id)]);
    expect(next.headers.get('link')).not.toContain('rel="next"');
  });

  it('refuses a time under the minimum delay, blank text and more than the daily and total limits', async () => {
    const dave = await createTestUser(core);
    await expect(createScheduledStatus(core, dave.account, params('now'), new Date(Date.now() + 500))).rejects.toThrow(
      'Validation failed: Scheduled at The scheduled date must be in the future',
    );
    await expect(createScheduledStatus(core, dave.account, params('   '), later())).rejects.toThrow(
      "Validation failed: Text can't be blank",
    );
    const day = new Date(Date.UTC(2031, 0, 15, 12));
    for (let i = 0; i < DAILY_LIMIT; i++)
      await createScheduledStatus(core, dave.account, params(`d${i}`), new Date(day.getTime() + i * 60_000));
    await expect(
      createScheduledStatus(core, dave.account, params('one too many'), new Date(day.getTime() + 3600_000)),
    ).rejects.toThrow('Validation failed: You have exceeded the limit of 25 scheduled posts for that day');
    // Another day is fine until the total limit.
    const filler = Array.from({ length: 300 - DAILY_LIMIT }, (_, i) => ({
      _id: BigInt(9_000_000 + i),
      accountId: dave.account._id,
      scheduledAt: new Date(Date.UTC(2032, 0, 1) + i * 86_400_000),
      params: params(`f${i}`),
      applicationId: null,
      idempotencyKey: null,
      claimedUntil: null,
      claimedBy: null,
      attempts: 0,
      lastError: null,
      createdAt: new Date(),
    }));
    await collection(core.db, scheduledStatuses).insertMany(filler);
    await expect(
      createScheduledStatus(core, dave.account, params('over the total'), new Date(Date.UTC(2031, 5, 1))),
    ).rejects.toThrow('Validation failed: You have exceeded the limit of 300 scheduled posts');
    await collection(core.db, scheduledStatuses).deleteMany({ accountId: dave.account._id });
  });

  it('publishes a due status exactly once with concurrent schedulers, with its media and poll', async () => {
    const media = await createMediaAttachment(core, alice.account._id, await png(20, 20), { synchronous: true });
    const withMedia = await createScheduledStatus(
      core,
      alice.account,
      params('Scheduled with media', { mediaIds: [media._id] }),
      later(),
    );
    const withPoll = await createScheduledStatus(
      core,
      alice.account,
      params('Scheduled with a poll', {
        poll: { options: ['yes', 'no'], expiresIn: 600, multiple: false, hideTotals: false },
      }),
      later(),
    );
    await makeDue(withMedia, withPoll);
    const rounds = await Promise.all(
      Array.from({ length: 6 }, (_, i) => publishDueScheduledStatuses(core, { workerId: `w${i}` })),
    );
    const posted = rounds.flat();
    expect(posted.map((s) => s.text).sort()).toEqual(['Scheduled with a poll', 'Scheduled with media']);
    expect(
      await collection(core.db, statuses).countDocuments({
        text: { $in: ['Scheduled with media', 'Scheduled with a poll'] },
      }),
    ).toBe(2);
    expect(
      await collection(core.db, scheduledStatuses).countDocuments({ _id: { $in: [withMedia._id, withPoll._id] } }),
    ).toBe(0);
    const mediaStatus = posted.find((s) => s.text === 'Scheduled with media')!;
    expect(mediaStatus.mediaIds).toEqual([media._id]);
    expect(await collection(core.db, mediaAttachments).findOne({ _id: media._id })).toMatchObject({
      statusId: mediaStatus._id,
      scheduledStatusId: null,
    });
    const pollStatus = posted.find((s) => s.text === 'Scheduled with a poll')!;
    expect(await collection(core.db, polls).findOne({ _id: pollStatus.pollId! })).toMatchObject({
      options: ['yes', 'no'],
    });
    expect(
      published.filter(
        (e) =>
          e.type === 'StatusCreated' &&
          [String(mediaStatus._id), String(pollStatus._id)].includes(String(e.payload.statusId)),
      ),
    ).toHaveLength(2);
  });

  it('recovers from a scheduler that died after claiming, before posting', async () => {
    const doc = await createScheduledStatus(core, bob.account, params('Claimed then crashed'), later());
    await makeDue(doc);
    // The dead process won attempt 0 and set its lease, then died.
    expect(await claimAttempt(core, `scheduled_status:${doc._id}`, 0, 'dead')).toBe(true);
    const leaseEnd = new Date(Date.now() + 60_000);
    await collection(core.db, scheduledStatuses).updateOne(
      { _id: doc._id },
      { $set: { attempts: 1, claimedBy: 'dead', claimedUntil: leaseEnd } },
    );
    expect(await publishDueScheduledStatuses(core, { workerId: 'early' })).toEqual([]);
    // Once the lease has run out, the next scheduler takes the record over as attempt 1.
    const late = await publishDueScheduledStatuses(core, { workerId: 'late', now: new Date(leaseEnd.getTime() + 1) });
    expect(late.map((s) => s.text)).toEqual(['Claimed then crashed']);
    expect(
      await collection(core.db, statuses).countDocuments({ accountId: bob.account._id, text: 'Claimed then crashed' }),
    ).toBe(1);
  });

  it('does not post twice when a scheduler died after posting, before removing the record', async () => {
    for (const lostIdempotencyRecord of [false, true]) {
      const text = `Posted then crashed ${lostIdempotencyRecord}`;
      const doc = await createScheduledStatus(core, bob.account, params(text), later());
      await makeDue(doc);
      await claimAttempt(core, `scheduled_status:${doc._id}`, 0, 'dead');
      await collection(core.db, scheduledStatuses).updateOne(
        { _id: doc._id },
        { $set: { attempts: 1, claimedBy: 'dead', claimedUntil: new Date(Date.now() - 1) } },
      );
      await postStatus(core, bob.account, { text, visibility: 'public' }, { idempotencyKey: publicationKey(doc._id) });
      if (lostIdempotencyRecord) {
        // Redis lost the idempotency record (restart without persistence): the scheduler must still
        // see that the status exists.
        const key = `idempotency:${bob.account._id}:${createHash('sha256').update(publicationKey(doc._id)).digest('hex')}`;
        expect(await core.redis.del(key)).toBe(1);
      }
      await publishDueScheduledStatuses(core, { workerId: 'next' });
      expect(await collection(core.db, scheduledStatuses).countDocuments({ _id: doc._id })).toBe(0);
      expect(await collection(core.db, statuses).countDocuments({ accountId: bob.account._id, text })).toBe(1);
    }
  });

  it('drops a scheduled status that can no longer be posted and frees its media', async () => {
    const media = await createMediaAttachment(core, bob.account._id, await png(8, 8), { synchronous: true });
    const parent = await postStatus(core, alice.account, { text: 'parent', visibility: 'public' });
    const doc = await createScheduledStatus(
      core,
      bob.account,
      params('reply to a deleted post', { inReplyToId: parent._id, mediaIds: [media._id] }),
      later(),
    );
    await collection(core.db, statuses).updateOne({ _id: parent._id }, { $set: { deletedAt: new Date() } });
    await makeDue(doc);
    expect(await publishDueScheduledStatuses(core, { workerId: 'w' })).toEqual([]);
    expect(await collection(core.db, scheduledStatuses).countDocuments({ _id: doc._id })).toBe(0);
    expect((await collection(core.db, mediaAttachments).findOne({ _id: media._id }))?.scheduledStatusId).toBeNull();
  });
});
