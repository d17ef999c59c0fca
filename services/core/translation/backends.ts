// Machine-translation backends behind one interface: LibreTranslate's and DeepL's HTTP APIs. The
// endpoint is configured by the operator (TRANSLATION_*), not by users; answers are still read with a
// size limit and a timeout, and a failing backend becomes TranslationUnavailable (503 for clients).
import type { TranslationConfig } from '../config.ts';

export interface TranslatedTexts {
  texts: string[];
  /** ISO 639-1 code the backend detected (or was given). */
  detectedSource: string;
}

export interface TranslationBackend {
  /** Shown as Translation.provider. */
  readonly provider: string;
  /** Translates HTML fragments from `source` ('und': detect) to `target`. */
  translate(texts: string[], source: string, target: string): Promise<TranslatedTexts>;
  /** Source language ('und' for detection) → target languages. */
  languages(): Promise<Record<string, string[]>>;
}

export class TranslationUnavailable extends Error {}

const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

async function call(cfg: TranslationConfig, url: string, init: RequestInit): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(cfg.timeoutMs) });
  } catch {
    throw new TranslationUnavailable('Translation service unreachable');
  }
  if (res.status === 429 || res.status === 456) throw new TranslationUnavailable('Translation quota exceeded');
  if (!res.ok) throw new TranslationUnavailable(`Translation service answered ${res.status}`);
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_RESPONSE_BYTES) throw new TranslationUnavailable('Translation answer too large');
  const body = await res.arrayBuffer();
  if (body.byteLength > MAX_RESPONSE_BYTES) throw new TranslationUnavailable('Translation answer too large');
  try {
    return JSON.parse(Buffer.from(body).toString('utf8')) as unknown;
  } catch {
    throw new TranslationUnavailable('Translation answer is not JSON');
  }
}

function unexpected(): never {
  throw new TranslationUnavailable('Unexpected answer from the translation service');
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const lang = (code: string) => code.toLowerCase().split(/[-_]/)[0];

/** {und: every target, source: its targets but itself} from a flat list of pairs. */
function languageMap(sources: string[], targetsOf: (source: string) => string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const all = new Set<string>();
  for (const s of sources) {
    const targets = [...new Set(targetsOf(s).map(lang))].filter((t) => t !== s);
    targets.forEach((t) => all.add(t));
    out[s] = targets.sort();
  }
  return { und: [...all].sort(), ...out };
}

export class LibreTranslateBackend implements TranslationBackend {
  readonly provider = 'LibreTranslate';
  private readonly cfg: TranslationConfig;
  constructor(cfg: TranslationConfig) {
    this.cfg = cfg;
  }

  async translate(texts: string[], source: string, target: string): Promise<TranslatedTexts> {
    const body = await call(this.cfg, `${this.cfg.endpoint}/translate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        q: texts,
        source: source === 'und' ? 'auto' : source,
        target,
        format: 'html',
        ...(this.cfg.apiKey ? { api_key: this.cfg.apiKey } : {}),
      }),
    });
    if (!isRecord(body)) unexpected();
    const translated = Array.isArray(body.translatedText) ? body.translatedText : [body.translatedText];
    if (translated.length !== texts.length || !translated.every((t) => typeof t === 'string')) unexpected();
    const detectedRaw = Array.isArray(body.detectedLanguage) ? body.detectedLanguage[0] : body.detectedLanguage;
    const detected =
      isRecord(detectedRaw) && typeof detectedRaw.language === 'string' ? lang(detectedRaw.language) : source;
    return { texts: translated as string[], detectedSource: detected };
  }

  async languages(): Promise<Record<string, string[]>> {
    const url = new URL(`${this.cfg.endpoint}/languages`);
    if (this.cfg.apiKey) url.searchParams.set('api_key', this.cfg.apiKey);
    const body = await call(this.cfg, url.toString(), { headers: { accept: 'application/json' } });
    if (!Array.isArray(body)) unexpected();
    const entries = body.filter(isRecord).filter((l) => typeof l.code === 'string');
    const targets = new Map(
      entries.map((l) => [
        lang(l.code as string),
        Array.isArray(l.targets) ? l.targets.filter((t) => typeof t === 'string') : [],
      ]),
    );
    return languageMap([...targets.keys()], (s) => targets.get(s) ?? []);
  }
}

export class DeepLBackend implements TranslationBackend {
  readonly provider = 'DeepL.com';
  private readonly cfg: TranslationConfig;
  constructor(cfg: TranslationConfig) {
    this.cfg = cfg;
  }

  private headers(): Record<string, string> {
    return { authorization: `DeepL-Auth-Key ${this.cfg.apiKey ?? ''}`, accept: 'application/json' };
  }

  async translate(texts: string[], source: string, target: string): Promise<TranslatedTexts> {
    const form = new URLSearchParams();
    for (const t of texts) form.append('text', t);
    if (source !== 'und') form.set('source_lang', source.toUpperCase());
    form.set('target_lang', target.toUpperCase());
    form.set('tag_handling', 'html');
    const body = await call(this.cfg, `${this.cfg.endpoint}/v2/translate`, {
      method: 'POST',
      headers: { ...this.headers(), 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    if (!isRecord(body) || !Array.isArray(body.translations) || body.translations.length !== texts.length) unexpected();
    const translations = body.translations.filter(isRecord);
    if (translations.length !== texts.length || !translations.every((t) => typeof t.text === 'string')) unexpected();
    const first = translations[0]?.detected_source_language;
    return {
      texts: translations.map((t) => t.text as string),
      detectedSource: typeof first === 'string' ? lang(first) : source,
    };
  }

  async languages(): Promise<Record<string, string[]>> {
    const list = async (type: 'source' | 'target') => {
      const body = await call(this.cfg, `${this.cfg.endpoint}/v2/languages?type=${type}`, { headers: this.headers() });
      if (!Array.isArray(body)) unexpected();
      return body
        .filter(isRecord)
        .map((l) => l.language)
        .filter((l): l is string => typeof l === 'string')
        .map(lang);
    };
    const [sources, targets] = await Promise.all([list('source'), list('target')]);
    return languageMap([...new Set(sources)], () => targets);
  }
}

export function backendFor(cfg: TranslationConfig): TranslationBackend {
  return cfg.backend === 'deepl' ? new DeepLBackend(cfg) : new LibreTranslateBackend(cfg);
}
