// Reading ActivityPub JSON from other servers: a nesting limit before parsing (deeply nested
// documents cost stack and time in every later walk), the AS2 @context requirement, the media
// types Mastodon accepts, and the small "as array / as id" helpers remote JSON needs everywhere
// (federation reference §11.4: be liberal in what shapes are accepted).

export const AS_CONTEXT = 'https://www.w3.org/ns/activitystreams';
export const MAX_JSON_DEPTH = 32;

export type JsonObject = Record<string, unknown>;

/** Nesting depth of a JSON text (brackets outside strings), stopping early past `max`. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** Parses a JSON object with the depth limit; null for anything else. */
export function parseJsonObject(text: string, maxDepth = MAX_JSON_DEPTH): JsonObject | null {
  if (jsonDepthExceeds(text, maxDepth)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : null;
}

/** `@context` is, or contains, the AS2 context URL (Mastodon drops documents without it). */
export function hasActivityStreamsContext(doc: JsonObject): boolean {
  const ctx = doc['@context'];
  if (ctx === AS_CONTEXT) return true;
  return Array.isArray(ctx) && ctx.includes(AS_CONTEXT);
}

/** `application/activity+json`, or `application/ld+json` with the AS2 profile. */
export function isActivityPubMediaType(contentType: string | undefined | null): boolean {
  if (!contentType) return false;
  const [type, ...params] = contentType.split(';').map((p) => p.trim());
  const media = type.toLowerCase();
  if (media === 'application/activity+json') return true;
  if (media !== 'application/ld+json') return false;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== 'profile') continue;
    const value = p
      .slice(eq + 1)
      .trim()
      .replace(/^"|"$/g, '');
    if (value.split(/\s+/).includes(AS_CONTEXT)) return true;
  }
  return false;
}

export function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** The id of a reference: a string, or an object's `id` (or `href` for links). */
export function idOf(value: unknown): string | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object') {
    const o = v as JsonObject;
    if (typeof o.id === 'string') return o.id;
    if (typeof o.href === 'string') return o.href;
  }
  return null;
}

/** Every id in a reference list (`to`, `cc`, `object` arrays ...). */
export function idsOf(value: unknown): string[] {
  return asArray(value)
    .map((v) => idOf(v))
    .filter((v): v is string => v !== null);
}

/** Whether the object's `type` is (or includes) one of the given types. */
export function typeIs(value: unknown, ...types: string[]): boolean {
  if (!value || typeof value !== 'object') return false;
  return asArray((value as JsonObject).type).some((t) => typeof t === 'string' && types.includes(t));
}

export function firstType(value: unknown): string | null {
  if (!value || typeof value !== 'object') return null;
  const t = asArray((value as JsonObject).type).find((x) => typeof x === 'string');
  return typeof t === 'string' ? t : null;
}

export function str(value: unknown, max = 100_000): string | null {
  return typeof value === 'string' ? value.slice(0, max) : null;
}

export function obj(value: unknown): JsonObject | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : null;
}
