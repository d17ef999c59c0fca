// The message catalogue of the pages: one JSON file per locale under ./locales, shaped like
// Mastodon's config/locales/*.yml (the locale as the root key, nested sections, `%{name}`
// placeholders), so translators work on a familiar structure. English is the fallback.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface Catalogue {
  [key: string]: string | Catalogue;
}

export type Translate = (key: string, vars?: Record<string, string | number>) => string;

const LOCALES_DIR = join(import.meta.dirname, 'locales');
export const DEFAULT_LOCALE = 'en';

const catalogues = new Map<string, Catalogue>();
for (const file of readdirSync(LOCALES_DIR)) {
  if (!file.endsWith('.json')) continue;
  const locale = file.slice(0, -'.json'.length);
  const root = JSON.parse(readFileSync(join(LOCALES_DIR, file), 'utf8')) as Record<string, Catalogue>;
  catalogues.set(locale, root[locale] ?? {});
}

function lookup(catalogue: Catalogue | undefined, key: string): string | undefined {
  let node: string | Catalogue | undefined = catalogue;
  for (const part of key.split('.')) {
    if (node === undefined || typeof node === 'string') return undefined;
    node = node[part];
  }
  return typeof node === 'string' ? node : undefined;
}

/** The locale of the catalogue used for a requested language tag (`pt-BR` → `pt-BR`, `pt`, then `en`). */
export function catalogueLocale(requested: string | null | undefined): string {
  if (requested) {
    if (catalogues.has(requested)) return requested;
    const base = requested.split(/[-_]/)[0];
    if (catalogues.has(base)) return base;
  }
  return DEFAULT_LOCALE;
}

export function translator(requested: string | null | undefined): Translate {
  const locale = catalogueLocale(requested);
  const own = catalogues.get(locale);
  const fallback = catalogues.get(DEFAULT_LOCALE);
  return (key, vars) => {
    const text = lookup(own, key) ?? lookup(fallback, key);
    // A missing key shows itself on the page (and fails the tests that read the text).
    if (text === undefined) return `[missing: ${key}]`;
    return vars ? text.replace(/%\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m)) : text;
  };
}

/** Whether a key exists in the English catalogue (used by the catalogue's own test). */
export function hasMessage(key: string): boolean {
  return lookup(catalogues.get(DEFAULT_LOCALE), key) !== undefined;
}
