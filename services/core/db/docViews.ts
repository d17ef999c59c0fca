// Views of a cached collection's documents (db/docCache.ts): what each cached copy holds (a
// projection, or a value derived from the documents) and how it is kept.
import type { Document } from 'mongodb';
import type { Core } from '../context.ts';
import type { CollectionDef } from './mongo.ts';

export interface DocView<T extends Document, R> {
  collection: CollectionDef<T>;
  /** The hash field this view's copy is stored under. */
  name: string;
  /** The fields the copy is made from (secrets stay in MongoDB only). */
  projection: Record<string, 0 | 1>;
  /**
   * Makes the cached value from the documents (e.g. a rendered entity), stored as JSON; without
   * it the projected document itself is stored, as BSON (bigints and dates survive).
   */
  derive?: (core: Core, docs: T[]) => Promise<R[]>;
  /**
   * Where a derived view's documents come from on a miss: this cached view of the same documents
   * (read through, so one MongoDB query fills both) instead of MongoDB. Safe under the same
   * generation check: the base copy read after this view's generations is at least as new, as a
   * write drops every view of its document at once.
   */
  base?: DocView<T, unknown>;
  /**
   * Also keep values in this process for so long: no Redis round trip at all. Writes made by this
   * process drop them at once (and keep a read that began before out of the layer); other
   * processes' writes show when they expire.
   */
  localTtlMs?: number;
  /**
   * BSON views read on every request (a page's live fields): keep the last parsed copy of each
   * document with its bytes, and hand the same (frozen) object out again while Redis returns the
   * same bytes. Alone it keeps one Redis read per request, so nothing is staler; only the parse,
   * which bson 7 does with much garbage for small documents, is saved.
   */
  shareParsed?: boolean;
  /** Phantom: the type of a cached copy. */
  readonly _copy?: R;
}

/**
 * A view of `def` whose copy leaves the `fields` out (0) or holds only them (1). The collection must
 * be declared with `cachedById` (otherwise its writes would not drop the copies).
 */
function projectedView<T extends Document, R>(
  def: CollectionDef<T>,
  name: string,
  fields: readonly string[],
  keep: 0 | 1,
  extra: Pick<DocView<T, R>, 'shareParsed' | 'derive' | 'localTtlMs' | 'base'>,
): DocView<T, R> {
  if (!def.cachedById) throw new Error(`${def.name} is not declared cachedById`);
  const projection = Object.fromEntries(fields.map((f) => [f, keep])) as Record<string, 0 | 1>;
  return { collection: def, name, projection, ...extra };
}

/** A cached view of `def`'s documents without the `omit` fields. */
export function defineDocView<T extends Document, K extends keyof T & string = never>(
  def: CollectionDef<T>,
  name: string,
  omit: readonly K[] = [],
  opts: { shareParsed?: boolean } = {},
): DocView<T, Omit<T, K>> {
  return projectedView(def, name, omit, 0, opts);
}

/** A cached view of `def`'s documents holding only the `pick` fields (and `_id`): small copies for hot reads. */
export function definePickView<T extends Document, K extends keyof T & string>(
  def: CollectionDef<T>,
  name: string,
  pick: readonly K[],
  opts: { shareParsed?: boolean; localTtlMs?: number } = {},
): DocView<T, Pick<T, K | '_id'>> {
  return projectedView(def, name, pick, 1, opts);
}

/**
 * A cached value computed from each copy of `base` (a rendering of the documents another view
 * holds), read through `base` on a miss: what is said of defineDerivedView holds.
 */
export function defineViewOf<T extends Document, B extends Document, R>(
  base: DocView<T, B>,
  name: string,
  derive: (core: Core, docs: B[]) => Promise<R[]>,
  opts: { localTtlMs?: number } = {},
): DocView<T, R> {
  return {
    collection: base.collection,
    name,
    // Informative only: a miss reads `base`, whose own projection applies.
    projection: base.projection,
    derive: derive as unknown as (core: Core, docs: T[]) => Promise<R[]>,
    localTtlMs: opts.localTtlMs,
    base: base as DocView<T, unknown>,
  };
}

/**
 * A cached value computed from each document without the `omit` fields (a rendering, say): it
 * is dropped with the document, so it may depend only on the document (or on things whose own
 * changes can wait for the entry to expire).
 */
export function defineDerivedView<T extends Document, R, K extends keyof T & string = never>(
  def: CollectionDef<T>,
  name: string,
  omit: readonly K[],
  derive: (core: Core, docs: Omit<T, K>[]) => Promise<R[]>,
  opts: { localTtlMs?: number } = {},
): DocView<T, R> {
  return projectedView(def, name, omit, 0, {
    derive: derive as (core: Core, docs: T[]) => Promise<R[]>,
    localTtlMs: opts.localTtlMs,
  });
}
