// Parameter schemas shared by the API areas.
import { Type } from '@sinclair/typebox';

/** A boolean as clients send it: JSON true/false, or a form string ("1", "true", "0", "false", "off"...); cast with railsBoolean. */
export const BoolLike = Type.Union([Type.Boolean(), Type.String({ maxLength: 10 }), Type.Number(), Type.Null()]);
