// Announcements (Mastodon 3.1+): the published announcements of this server for a signed-in user,
// dismissing them, and emoji reactions (Unicode or a custom emoji's shortcode). Administrators write
// and publish them with the CLI (`announcements ...`); changes stream to `user` streams.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import {
  addReaction,
  announcementsFor,
  dismissAnnouncement,
  removeReaction,
} from '../../core/announcements/announcements.ts';
import { requireUser } from '../plugins/auth.ts';
import { BoolLike, Empty, IdParams, idParam } from '../params.ts';
import { CustomEmojiEntity } from '../../core/entities/account.ts';
import { WRITE_ACCOUNTS as DISMISS, WRITE_FAVOURITES as REACT } from '../scopes.ts';

const ReactionEntity = Type.Object({
  name: Type.String(),
  count: Type.Integer(),
  me: Type.Optional(Type.Boolean()),
  url: Type.Optional(Type.String()),
  static_url: Type.Optional(Type.String()),
});

const AnnouncementEntity = Type.Object({
  id: Type.String(),
  content: Type.String(),
  starts_at: Type.Union([Type.String(), Type.Null()]),
  ends_at: Type.Union([Type.String(), Type.Null()]),
  all_day: Type.Boolean(),
  published_at: Type.String(),
  updated_at: Type.String(),
  read: Type.Optional(Type.Boolean()),
  mentions: Type.Array(
    Type.Object({ id: Type.String(), username: Type.String(), url: Type.String(), acct: Type.String() }),
  ),
  statuses: Type.Array(Type.Object({ id: Type.String(), url: Type.String() })),
  tags: Type.Array(Type.Object({ name: Type.String(), url: Type.String() })),
  emojis: Type.Array(CustomEmojiEntity),
  reactions: Type.Array(ReactionEntity),
});

/** Mastodon asks for a user and no particular scope to list them. */
const LIST = { user: 'required' as const };

const ReactionParams = Type.Object({ id: Type.String({ maxLength: 30 }), name: Type.String({ maxLength: 200 }) });

const announcementsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.get(
    '/api/v1/announcements',
    {
      config: { auth: LIST },
      schema: {
        querystring: Type.Object({ with_dismissed: Type.Optional(BoolLike) }, { additionalProperties: true }),
        response: { 200: Type.Array(AnnouncementEntity) },
      },
    },
    async (request) => {
      const { account } = requireUser(request);
      return announcementsFor(core, account, railsBoolean(request.query.with_dismissed) === true);
    },
  );

  app.post(
    '/api/v1/announcements/:id/dismiss',
    { config: { auth: DISMISS }, schema: { params: IdParams, response: { 200: Empty } } },
    async (request) => {
      const { account } = requireUser(request);
      await dismissAnnouncement(core, account, idParam(request.params.id));
      return {};
    },
  );

  /** Adds or removes the caller's reaction `:name` to the announcement `:id`; Mastodon answers `{}`. */
  const reactionHandler =
    (change: typeof addReaction) => async (request: FastifyRequest<{ Params: Static<typeof ReactionParams> }>) => {
      const { account } = requireUser(request);
      await change(core, account, idParam(request.params.id), request.params.name);
      return {};
    };
  const reaction = { config: { auth: REACT }, schema: { params: ReactionParams, response: { 200: Empty } } };
  app.put('/api/v1/announcements/:id/reactions/:name', reaction, reactionHandler(addReaction));
  app.delete('/api/v1/announcements/:id/reactions/:name', reaction, reactionHandler(removeReaction));
};

export default announcementsArea;
