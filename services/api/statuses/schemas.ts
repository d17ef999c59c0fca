// Request shapes of the statuses API. Forms arrive with strings for everything (Rails-style
// booleans), JSON with real types and nulls; both are accepted and normalised by the route.
import { BoolLike } from '../params.ts';
import { railsBoolean } from '../../core/railsParams.ts';
import { Type, type Static } from '@sinclair/typebox';

const Flag = BoolLike;
const OptString = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const IdList = Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()]));

export const PollBody = Type.Object({
  options: Type.Optional(Type.Unknown()),
  expires_in: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
  multiple: Type.Optional(Flag),
  hide_totals: Type.Optional(Flag),
});

/** POST /api/v1/statuses (also what a ScheduledStatus's `params` hold). */
export const PostStatusBody = Type.Object({
  status: OptString,
  media_ids: IdList,
  poll: Type.Optional(Type.Union([PollBody, Type.Null()])),
  in_reply_to_id: OptString,
  sensitive: Type.Optional(Flag),
  spoiler_text: OptString,
  visibility: OptString,
  language: OptString,
  scheduled_at: OptString,
  // Mastodon 4.5 quote posts.
  quoted_status_id: OptString,
  quote_approval_policy: OptString,
  allowed_mentions: IdList,
});
export type PostStatusBody = Static<typeof PostStatusBody>;

export const MediaAttributesBody = Type.Object({
  id: Type.String(),
  description: Type.Optional(Type.String()),
  focus: Type.Optional(Type.String()),
});

export const EditStatusBody = Type.Object({
  status: OptString,
  spoiler_text: OptString,
  sensitive: Type.Optional(Flag),
  language: OptString,
  media_ids: IdList,
  media_attributes: Type.Optional(
    Type.Union([Type.Array(MediaAttributesBody), Type.Record(Type.String(), MediaAttributesBody), Type.Null()]),
  ),
  poll: Type.Optional(Type.Union([PollBody, Type.Null()])),
  quote_approval_policy: OptString,
});
export type EditStatusBody = Static<typeof EditStatusBody>;

export const InteractionPolicyBody = Type.Object({ quote_approval_policy: OptString });

export const QuoteParams = Type.Object({ id: Type.String(), quoting_status_id: Type.String() });

export const ReblogBody = Type.Object({ visibility: OptString });

export { AnyIdParams as IdParams } from '../params.ts';

export const PageQuery = Type.Object({
  max_id: Type.Optional(Type.String()),
  since_id: Type.Optional(Type.String()),
  min_id: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String()),
});

/** Rails-style boolean; null when not given. */
export function parseFlag(value: unknown): boolean | null {
  return railsBoolean(value) ?? null;
}
