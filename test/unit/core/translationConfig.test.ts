// TRANSLATION_* settings (and Mastodon's DEEPL_* / LIBRE_TRANSLATE_* names): valid choices load,
// invalid ones stop start-up naming the variable.
import { ConfigError, loadConfig } from '../../../services/core/config.ts';

function problem(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.variable;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('translation configuration', () => {
  it('is off by default', () => {
    expect(loadConfig({}).translation).toBeNull();
  });

  it('reads TRANSLATION_* for both backends', () => {
    expect(
      loadConfig({ TRANSLATION_BACKEND: 'libretranslate', TRANSLATION_ENDPOINT: 'http://lt.local:5000/' }).translation,
    ).toEqual({ backend: 'libretranslate', endpoint: 'http://lt.local:5000', apiKey: null, timeoutMs: 10_000 });
    expect(
      loadConfig({ TRANSLATION_BACKEND: 'deepl', TRANSLATION_API_KEY: 'k', TRANSLATION_TIMEOUT_MS: '2000' })
        .translation,
    ).toEqual({ backend: 'deepl', endpoint: 'https://api.deepl.com', apiKey: 'k', timeoutMs: 2000 });
  });

  it("accepts Mastodon's variables", () => {
    expect(loadConfig({ DEEPL_API_KEY: 'k' }).translation).toMatchObject({
      backend: 'deepl',
      endpoint: 'https://api-free.deepl.com',
    });
    expect(loadConfig({ DEEPL_API_KEY: 'k', DEEPL_PLAN: 'pro' }).translation?.endpoint).toBe('https://api.deepl.com');
    expect(loadConfig({ LIBRE_TRANSLATE_ENDPOINT: 'https://lt.example' }).translation).toMatchObject({
      backend: 'libretranslate',
      endpoint: 'https://lt.example',
    });
  });

  it('names the variable that is wrong', () => {
    expect(problem({ TRANSLATION_BACKEND: 'google' })).toBe('TRANSLATION_BACKEND');
    expect(problem({ TRANSLATION_BACKEND: 'libretranslate' })).toBe('TRANSLATION_ENDPOINT');
    expect(problem({ TRANSLATION_BACKEND: 'libretranslate', TRANSLATION_ENDPOINT: 'ftp://x' })).toBe(
      'TRANSLATION_ENDPOINT',
    );
    expect(problem({ TRANSLATION_BACKEND: 'deepl' })).toBe('TRANSLATION_API_KEY');
    expect(problem({ DEEPL_API_KEY: 'k', TRANSLATION_TIMEOUT_MS: 'soon' })).toBe('TRANSLATION_TIMEOUT_MS');
  });
});
