// Small local servers speaking the two translation APIs the server supports (LibreTranslate's and
// DeepL's), so translation is tested over real HTTP. Each "translates" by tagging the text with the
// target language and records what it was asked.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TranslationStub {
  url: string;
  /** Bodies of the translate requests received. */
  requests: Record<string, unknown>[];
  /** When set, translate requests answer this status. */
  failWith: number | null;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function listen(
  handler: (stub: TranslationStub, req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<TranslationStub> {
  let server: Server | null = null;
  const stub: TranslationStub = {
    url: '',
    requests: [],
    failWith: null,
    close: () => new Promise((resolve) => (server ? server.close(() => resolve()) : resolve())),
  };
  server = createServer((req, res) => {
    handler(stub, req, res).catch(() => json(res, 500, { error: 'stub failure' }));
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return stub;
}

/** LibreTranslate: GET /languages, POST /translate (JSON; `q` a string or an array). */
export function libreTranslateStub(apiKey: string | null = null): Promise<TranslationStub> {
  return listen(async (stub, req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    if (req.method === 'GET' && url.pathname === '/languages') {
      return json(res, 200, [
        { code: 'en', name: 'English', targets: ['de', 'en', 'fr'] },
        { code: 'de', name: 'German', targets: ['en', 'fr'] },
        { code: 'fr', name: 'French', targets: ['de', 'en'] },
      ]);
    }
    if (req.method === 'POST' && url.pathname === '/translate') {
      const input = JSON.parse(await body(req)) as {
        q: string | string[];
        source: string;
        target: string;
        api_key?: string;
      };
      stub.requests.push(input);
      if (apiKey !== null && input.api_key !== apiKey) return json(res, 403, { error: 'Invalid API key' });
      if (stub.failWith) return json(res, stub.failWith, { error: 'failing on purpose' });
      const texts = Array.isArray(input.q) ? input.q : [input.q];
      const translated = texts.map((t) => `[${input.target}] ${t}`);
      const detected = { confidence: 90, language: input.source === 'auto' ? 'de' : input.source };
      return json(res, 200, {
        translatedText: Array.isArray(input.q) ? translated : translated[0],
        ...(input.source === 'auto'
          ? { detectedLanguage: Array.isArray(input.q) ? texts.map(() => detected) : detected }
          : {}),
      });
    }
    json(res, 404, { error: 'Not Found' });
  });
}

/** DeepL API v2: GET /v2/languages?type=source|target, POST /v2/translate (form), DeepL-Auth-Key. */
export function deeplStub(apiKey: string): Promise<TranslationStub> {
  return listen(async (stub, req, res) => {
    if (req.headers.authorization !== `DeepL-Auth-Key ${apiKey}`) return json(res, 403, { message: 'Forbidden' });
    const url = new URL(req.url ?? '/', 'http://stub');
    if (req.method === 'GET' && url.pathname === '/v2/languages') {
      return url.searchParams.get('type') === 'target'
        ? json(res, 200, [{ language: 'DE' }, { language: 'EN-GB' }, { language: 'EN-US' }, { language: 'FR' }])
        : json(res, 200, [{ language: 'DE' }, { language: 'EN' }, { language: 'FR' }]);
    }
    if (req.method === 'POST' && url.pathname === '/v2/translate') {
      const form = new URLSearchParams(await body(req));
      const input = {
        text: form.getAll('text'),
        source_lang: form.get('source_lang'),
        target_lang: form.get('target_lang'),
      };
      stub.requests.push(input);
      if (stub.failWith) return json(res, stub.failWith, { message: 'Quota exceeded' });
      return json(res, 200, {
        translations: input.text.map((t) => ({
          detected_source_language: input.source_lang ?? 'FR',
          text: `<${input.target_lang}> ${t}`,
        })),
      });
    }
    json(res, 404, { message: 'Not found' });
  });
}
