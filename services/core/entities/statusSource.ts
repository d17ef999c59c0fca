// StatusSource (GET /api/v1/statuses/:id/source).
import { Type, type Static } from '@sinclair/typebox';
import type { StatusDoc } from '../model/statuses.ts';

export const StatusSourceEntity = Type.Object({ id: Type.String(), text: Type.String(), spoiler_text: Type.String() });
export type StatusSource = Static<typeof StatusSourceEntity>;

export function presentStatusSource(s: StatusDoc): StatusSource {
  return { id: String(s._id), text: s.text, spoiler_text: s.spoilerText };
}
