// Parameter schemas shared by the API areas.
import { Type } from '@sinclair/typebox';
import { parseId, type Id } from '../core/ids.ts';
import { notFound } from '../core/errors.ts';

/** `:id` of a resource: an id string of at most 30 characters (longer is a 400). */
export const IdParams = Type.Object({ id: Type.String({ maxLength: 30 }) });
/** `:id` without a length limit: any string, an unparsable one a 404 (statuses, media, polls). */
export const AnyIdParams = Type.Object({ id: Type.String() });

/** Mastodon's cursor parameters (max_id, since_id, min_id, limit), to spread into a query schema. */
export const CursorFields = {
  max_id: Type.Optional(Type.String({ maxLength: 30 })),
  since_id: Type.Optional(Type.String({ maxLength: 30 })),
  min_id: Type.Optional(Type.String({ maxLength: 30 })),
  limit: Type.Optional(Type.String({ maxLength: 30 })),
};
/** A query of the cursor alone (other parameters allowed and ignored). */
export const CursorQuery = Type.Object(CursorFields, { additionalProperties: true });

/** The answer of an action with nothing to return: Mastodon's `{}`. */
export const Empty = Type.Object({});

/** An `:id` as a 64-bit id; anything else is a 404, as for a missing record. */
export function idParam(raw: string): Id {
  const id = parseId(raw);
  if (id === null) throw notFound();
  return id;
}

/** A boolean as clients send it: JSON true/false, or a form string ("1", "true", "0", "false", "off"...); cast with railsBoolean. */
export const BoolLike = Type.Union([Type.Boolean(), Type.String({ maxLength: 10 }), Type.Number(), Type.Null()]);
