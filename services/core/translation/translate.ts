// POST /api/v1/statuses/:id/translate: a status the caller may see, public or unlisted, with content,
// translated by the configured backend. Results are cached in Redis per status version and target
// language, so a popular status is translated once per language; the language pairs the backend
// offers are cached for a day.
import { createHash } from 'node:crypto';
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import type { AccountDoc } from '../model/accounts.ts';
import type { UserDoc } from '../model/users.ts';
import { polls } from '../model/polls.ts';
import { mediaAttachments } from '../model/media.ts';
import type { Id } from '../ids.ts';
import { findVisibleStatus } from '../statuses/visibility.ts';
import { forbidden, notFound, unavailable as unavailableError } from '../errors.ts';
import { backendFor, TranslationUnavailable, type TranslationBackend } from './backends.ts';

export interface TranslationEntity {
  content: string;
  spoiler_text: string;
  poll?: { id: string; options: { title: string }[] };
  media_attachments: { id: string; description: string }[];
  detected_source_language: string;
  language: string;
  provider: string;
}

const LANGUAGES_SECONDS = 86_400;
const LANGUAGES_RETRY_SECONDS = 60;
const TRANSLATION_SECONDS = 86_400;
const LANGUAGE_CODE = /^[a-z]{2,3}([-_][a-z0-9]{2,8})?$/i;

const backends = new WeakMap<Core, TranslationBackend>();

function backendOf(core: Core): TranslationBackend | null {
  const cfg = core.config.translation;
  if (!cfg) return null;
  let b = backends.get(core);
  if (!b) {
    b = backendFor(cfg);
    backends.set(core, b);
  }
  return b;
}

/** GET /api/v1/instance/translation_languages: `{}` without a backend or while it cannot answer. */
export async function translationLanguages(core: Core): Promise<Record<string, string[]>> {
  const backend = backendOf(core);
  if (!backend) return {};
  const key = `translation:languages:${core.config.translation?.backend}`;
  const hit = await core.redis.get(key);
  if (hit !== null) return JSON.parse(hit) as Record<string, string[]>;
  try {
    const langs = await backend.languages();
    await core.redis.set(key, JSON.stringify(langs), 'EX', LANGUAGES_SECONDS);
    return langs;
  } catch (err) {
    // Remembered briefly, so a backend that is down does not slow every caller by its timeout.
    core.logger.warn({ err: (err as Error).message }, 'translation languages unavailable');
    await core.redis.set(key, '{}', 'EX', LANGUAGES_RETRY_SECONDS);
    return {};
  }
}

const unavailable = () => unavailableError('Service Unavailable');

export async function translateStatus(
  core: Core,
  viewer: { account: AccountDoc; user: UserDoc },
  statusId: Id,
  requestedLang: string | undefined,
): Promise<TranslationEntity> {
  const status = await findVisibleStatus(core, viewer.account, statusId);
  if (!status) throw notFound();
  const backend = backendOf(core);
  if (!backend) throw notFound();
  if (status.visibility !== 'public' && status.visibility !== 'unlisted') throw forbidden();
  if (status.reblogOfId !== null || status.content.trim() === '') throw forbidden();
  const target = (requestedLang || viewer.user.locale || 'en').toLowerCase().split(/[-_]/)[0];
  if (!LANGUAGE_CODE.test(target)) throw forbidden();
  const source = status.language?.toLowerCase().split(/[-_]/)[0] || 'und';
  let langs: Record<string, string[]>;
  try {
    langs = await translationLanguages(core);
  } catch {
    throw unavailable();
  }
  if (!langs[source]?.includes(target)) throw forbidden();

  const [poll, attachments] = await Promise.all([
    status.pollId === null ? null : collection(core.db, polls).findOne({ _id: status.pollId }),
    status.mediaIds.length === 0
      ? []
      : collection(core.db, mediaAttachments)
          .find({ _id: { $in: status.mediaIds } })
          .toArray(),
  ]);
  const described = attachments.filter((m) => m.description);
  const texts = [
    status.content,
    status.spoilerText,
    ...(poll?.options ?? []),
    ...described.map((m) => m.description as string),
  ];
  const version = createHash('sha256').update(JSON.stringify(texts)).digest('hex').slice(0, 16);
  const key = `translation:${status._id}:${version}:${target}`;
  const hit = await core.redis.get(key);
  if (hit !== null) return JSON.parse(hit) as TranslationEntity;

  // Only non-empty texts go to the backend (DeepL refuses empty ones).
  const sent = texts.map((t, i) => [t, i] as const).filter(([t]) => t.trim() !== '');
  let result;
  try {
    result = await backend.translate(
      sent.map(([t]) => t),
      source,
      target,
    );
  } catch (err) {
    if (err instanceof TranslationUnavailable) {
      core.logger.warn({ err: err.message, statusId: String(status._id) }, 'translation failed');
      throw unavailable();
    }
    throw err;
  }
  const out = texts.map(() => '');
  sent.forEach(([, i], n) => (out[i] = result.texts[n]));
  const pollCount = poll?.options.length ?? 0;
  const entity: TranslationEntity = {
    content: out[0],
    spoiler_text: out[1],
    media_attachments: described.map((m, i) => ({ id: String(m._id), description: out[2 + pollCount + i] })),
    detected_source_language: source === 'und' ? result.detectedSource : source,
    language: target,
    provider: backend.provider,
  };
  if (poll) entity.poll = { id: String(poll._id), options: out.slice(2, 2 + pollCount).map((title) => ({ title })) };
  await core.redis.set(key, JSON.stringify(entity), 'EX', TRANSLATION_SECONDS);
  return entity;
}
