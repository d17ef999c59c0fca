// Request parameters the way Mastodon clients send them: query string, url-encoded or multipart
// forms with Rails bracket notation (`poll[options][]=a`, `fields_attributes[0][name]=x`), or JSON.
// Query parameters count on POST/PUT/PATCH/DELETE too (body wins). Uploaded files land in
// `request.uploads` (buffered, size-limited), their fields in the body like any other parameter.
import fp from 'fastify-plugin';
import multipart from '@fastify/multipart';
import formbody from '@fastify/formbody';
import qs from 'qs';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';

export interface Upload {
  filename: string;
  mimetype: string;
  data: Buffer;
}

declare module 'fastify' {
  interface FastifyRequest {
    uploads: Record<string, Upload>;
  }
}

const QS = { arrayLimit: 1000, depth: 8, parameterLimit: 2000, allowDots: false } as const;

export function parseQueryString(s: string): Record<string, unknown> {
  return plainPairs(s) ?? (qs.parse(indexRailsHashArrays(s), QS) as Record<string, unknown>);
}

/** `key=value&...` with nothing to decode, nest or repeat: what most GET requests carry. */
const PLAIN_PAIRS = /^[\w-]+=[\w.~-]*(?:&[\w-]+=[\w.~-]*)*$/;

/** What qs makes of a plain query string, without qs (which took 2 % of a timeline request); else null. */
function plainPairs(s: string): Record<string, string> | null {
  if (s.length > 512 || !PLAIN_PAIRS.test(s)) return null;
  const out: Record<string, string> = {};
  for (const pair of s.split('&')) {
    const eq = pair.indexOf('=');
    const key = pair.slice(0, eq);
    // A repeated key makes an array, and qs leaves out Object.prototype's names.
    if (Object.hasOwn(out, key) || key in Object.prototype) return null;
    out[key] = pair.slice(eq + 1);
  }
  return out;
}

function decodeKey(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * Rack builds arrays of hashes from `list[][name]=a&list[][value]=b&list[][name]=c`: a key goes
 * into the last hash unless that hash has it already, which starts a new one. qs would merge them
 * into one hash of arrays, so such keys get explicit indexes first (`list[0][name]`, ...).
 */
export function indexRailsHashArrays(s: string): string {
  if (!s.includes('[]') && !/%5B%5D/i.test(s)) return s;
  const state = new Map<string, { index: number; seen: Set<string> }>();
  return s
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawKey = eq === -1 ? pair : pair.slice(0, eq);
      const key = decodeKey(rawKey);
      const at = key.indexOf('[][');
      if (at <= 0) return pair;
      const prefix = key.slice(0, at);
      const child = key.slice(at + 2);
      let entry = state.get(prefix);
      if (!entry) {
        entry = { index: 0, seen: new Set() };
        state.set(prefix, entry);
      } else if (!child.includes('[]') && entry.seen.has(child)) {
        entry.index += 1;
        entry.seen = new Set();
      }
      entry.seen.add(child);
      const indexed = `${prefix}[${entry.index}]${child}`;
      return eq === -1 ? encodeURIComponent(indexed) : `${encodeURIComponent(indexed)}${pair.slice(eq)}`;
    })
    .join('&');
}

/**
 * Errors while reading a multipart body: the limits' own 4xx errors stay; the parser's plain
 * errors (no boundary, truncated body, ...) are the client's malformed request, a 400 like Rack's.
 */
function malformedMultipart(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError(400, `Invalid multipart/form-data body: ${message}`);
}

export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

export default fp(
  async function paramsPlugin(app: FastifyInstance) {
    app.decorateRequest('uploads', null as unknown as Record<string, Upload>);
    await app.register(formbody, { parser: (s: string) => parseQueryString(s), bodyLimit: 1024 * 1024 });
    await app.register(multipart, {
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 4, fields: 1000, fieldSize: 1024 * 1024 },
    });

    // An empty JSON body is an empty object (clients POST `{}`-less bodies to favourite etc.).
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_req, body, done) => {
      const text = (body as string).trim();
      if (text === '') return done(null, {});
      try {
        done(null, JSON.parse(text));
      } catch {
        done(new ApiError(400, 'Invalid JSON in request body'), undefined);
      }
    });

    app.addHook('preValidation', async (request) => {
      request.uploads = {};
      if (request.isMultipart()) {
        const pairs: string[] = [];
        try {
          for await (const part of request.parts()) {
            if (part.type === 'file') {
              const data = await part.toBuffer().catch((err: { code?: string }) => {
                if (err.code === 'FST_REQ_FILE_TOO_LARGE')
                  throw new ApiError(422, 'Validation failed: File is too big');
                throw err;
              });
              request.uploads[part.fieldname] = { filename: part.filename, mimetype: part.mimetype, data };
            } else {
              pairs.push(`${encodeURIComponent(part.fieldname)}=${encodeURIComponent(String(part.value))}`);
            }
          }
        } catch (err) {
          throw malformedMultipart(err);
        }
        request.body = parseQueryString(pairs.join('&'));
      }
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        const query = (request.query ?? {}) as Record<string, unknown>;
        const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
        request.body = { ...query, ...body };
      }
    });
  },
  { name: 'params' },
);
