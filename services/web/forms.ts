// Reading submitted forms: every field is a string or absent (a hostile form may send arrays,
// objects or nothing at all), with a length cap.
import type { FastifyRequest } from 'fastify';

export function formField(request: FastifyRequest, name: string, max = 10_000): string {
  const body = request.body;
  if (!body || typeof body !== 'object') return '';
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value.slice(0, max) : '';
}

export function queryField(request: FastifyRequest, name: string, max = 1000): string {
  const query = request.query;
  if (!query || typeof query !== 'object') return '';
  const value = (query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value.slice(0, max) : '';
}

/** A checkbox's value as Rails reads it ("1", "true", "on" are on). */
export function formCheckbox(request: FastifyRequest, name: string): boolean {
  return /^(1|true|on)$/i.test(formField(request, name, 10));
}

/** A repeated field (`name[]=a&name[]=b`, checkboxes): its string values, at most `maxItems` of them. */
export function formList(request: FastifyRequest, name: string, maxItems = 200, max = 1000): string[] {
  const body = request.body;
  if (!body || typeof body !== 'object') return [];
  const value = (body as Record<string, unknown>)[name];
  const list = Array.isArray(value) ? value : [value];
  return list
    .filter((v): v is string => typeof v === 'string')
    .slice(0, maxItems)
    .map((v) => v.slice(0, max));
}
