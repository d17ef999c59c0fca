// Parameter shapes shared by the accounts routes: Rails-style booleans and field attributes.
import { Type } from '@sinclair/typebox';

export { BoolLike } from '../params.ts';
export { railsBoolean } from '../../core/railsParams.ts';

export const FieldAttribute = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 10_000 })), value: Type.Optional(Type.String({ maxLength: 10_000 })) },
  { additionalProperties: true },
);

/** `fields_attributes` as an array or a hash keyed "0".."n" (Rails nested attributes). */
export const FieldsAttributes = Type.Union([
  Type.Array(FieldAttribute, { maxItems: 50 }),
  Type.Record(Type.String({ pattern: '^\\d{1,3}$' }), FieldAttribute),
]);

export function fieldList(value: unknown): { name: string; value: string }[] {
  if (!value || typeof value !== 'object') return [];
  const entries = Array.isArray(value)
    ? value
    : Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([, v]) => v);
  return entries
    .filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null)
    .map((e) => ({
      name: typeof e.name === 'string' ? e.name : '',
      value: typeof e.value === 'string' ? e.value : '',
    }));
}
