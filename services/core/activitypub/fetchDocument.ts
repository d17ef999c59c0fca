// Fetching an ActivityPub document (actor, object, collection, key) with the origin rules of
// federation reference §8.1-8.2 (CVE-2024-23832's class): signed GET (instance actor unless a
// signer is given), 200 with an ActivityPub media type, the AS2 @context, and an `id` that equals
// the URL it was fetched from. When the caller does not know the id in advance (search by URL, key
// ids) the document may name another id: that id is fetched once and must answer with itself.
import type { Core } from '../context.ts';
import type { SigningKey } from './keys.ts';
import { instanceSigningKey } from './keys.ts';
import { FetchError, safeFetch } from './safeFetch.ts';
import { hasActivityStreamsContext, isActivityPubMediaType, parseJsonObject, type JsonObject } from './json.ts';

export const AP_ACCEPT =
  'application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams"';

export type DocumentProblem = 'status' | 'media-type' | 'json' | 'context' | 'id-mismatch' | 'gone';

/** The fetch succeeded but the answer is not a document we may use. */
export class DocumentError extends Error {
  readonly problem: DocumentProblem;
  readonly url: string;
  readonly status: number | null;
  constructor(problem: DocumentProblem, url: string, message: string, status: number | null = null) {
    super(message);
    this.name = 'DocumentError';
    this.problem = problem;
    this.url = url;
    this.status = status;
  }
}

export interface FetchDocumentOptions {
  /** Sign as this key (default: the instance actor). null: unsigned. */
  signer?: SigningKey | null;
  /** The id is not known in advance: accept a document naming another id if that id confirms itself. */
  idUnknown?: boolean;
  /** Any id at all (collection pages, Mastodon's fetch_resource_without_id_validation). */
  anyId?: boolean;
  timeoutMs?: number;
}

/** One fetch; `matches` says whether the document's id is the URL asked for (or the redirect target). */
async function fetchOnce(
  core: Core,
  url: string,
  signer: SigningKey | null,
  timeoutMs?: number,
): Promise<{ doc: JsonObject; matches: boolean }> {
  const res = await safeFetch(core.config, url, { headers: { accept: AP_ACCEPT }, sign: signer, timeoutMs });
  if (res.status === 410) throw new DocumentError('gone', url, 'gone', 410);
  if (res.status !== 200) throw new DocumentError('status', url, `answered ${res.status}`, res.status);
  if (!isActivityPubMediaType(res.headers['content-type']))
    throw new DocumentError(
      'media-type',
      url,
      `not an ActivityPub document (${res.headers['content-type'] ?? 'none'})`,
    );
  const doc = parseJsonObject(res.body.toString('utf8'));
  if (!doc) throw new DocumentError('json', url, 'not a JSON object (or nested too deeply)');
  if (!hasActivityStreamsContext(doc)) throw new DocumentError('context', url, 'no ActivityStreams @context');
  // Mastodon compares strings exactly; after a redirect the document must be the target's own.
  return { doc, matches: doc.id === url || doc.id === res.url };
}

/** Fetches `url` and returns the document whose `id` is proven by its own origin. */
export async function fetchDocument(core: Core, url: string, opts: FetchDocumentOptions = {}): Promise<JsonObject> {
  const signer = opts.signer === undefined ? await instanceSigningKey(core) : opts.signer;
  const first = await fetchOnce(core, url, signer, opts.timeoutMs);
  if (first.matches || opts.anyId) return first.doc;
  const claimed = first.doc.id;
  if (!opts.idUnknown || typeof claimed !== 'string')
    throw new DocumentError('id-mismatch', url, `document at ${url} claims id ${String(claimed)}`);
  const again = await fetchOnce(core, claimed, signer, opts.timeoutMs);
  if (again.doc.id !== claimed)
    throw new DocumentError('id-mismatch', claimed, `document at ${claimed} does not confirm its id`);
  return again.doc;
}

export function isFetchProblem(err: unknown): err is FetchError | DocumentError {
  return err instanceof FetchError || err instanceof DocumentError;
}
