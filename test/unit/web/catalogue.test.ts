// The message catalogue of the pages: every key the templates and page plugins use exists in
// English, placeholders are filled, and a locale missing a key falls back to English.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { hasMessage, translator, catalogueLocale } from '../../../services/web/i18n.ts';
import { DOMAIN_BLOCKS_VISIBILITIES } from '../../../services/core/instance/settings.ts';
import { REGISTRATIONS_MODES } from '../../../services/core/settings/settings.ts';
import { FEED_ACCESS_VALUES } from '../../../services/core/settings/feedAccess.ts';

const WEB = join(__dirname, '..', '..', '..', 'services', 'web');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(eta|ts)$/.test(name) ? [path] : [];
  });
}

describe('page message catalogue', () => {
  it('has every key the pages use', () => {
    const used = new Set<string>();
    const prefixes = new Set<string>();
    for (const file of files(WEB)) {
      const text = readFileSync(file, 'utf8');
      // t('a.b'), it.t('a.b'), title: 'a.b', lines: ['a.b'], label: 'a.b'
      // t('a.b_' + value): a key chosen at run time from a prefix; its values are checked below.
      for (const m of text.matchAll(/\bt\(\s*'([a-z_]+(?:\.[a-z_:]+)+)'(\s*\+)?/g)) (m[2] ? prefixes : used).add(m[1]);
      for (const m of text.matchAll(/\b(?:title|label|lines):\s*\[?'([a-z_]+(?:\.[a-z_]+)+)'/g)) used.add(m[1]);
    }
    expect(used.size).toBeGreaterThan(40);
    expect([...used].filter((k) => !hasMessage(k))).toEqual([]);
    // Every value a select offers for such a prefix (the admin settings' modes and feed settings).
    const dynamic: Record<string, readonly string[]> = {
      'admin.settings.mode_': REGISTRATIONS_MODES,
      'admin.settings.feed_': FEED_ACCESS_VALUES,
      'admin.settings.visibility_': DOMAIN_BLOCKS_VISIBILITIES,
    };
    expect([...prefixes].sort()).toEqual(Object.keys(dynamic).sort());
    const missing = Object.entries(dynamic).flatMap(([p, values]) => values.map((v) => p + v));
    expect(missing.filter((k) => !hasMessage(k))).toEqual([]);
  });

  it('fills placeholders and falls back to English', () => {
    expect(translator('en')('auth.login_to', { instance: 'social.test' })).toBe('Log in to social.test');
    expect(catalogueLocale('de')).toBe('en');
    expect(translator('de')('auth.login')).toBe('Log in');
    expect(translator('en')('no.such.key')).toBe('[missing: no.such.key]');
  });
});
