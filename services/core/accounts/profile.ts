// Profile editing (PATCH /api/v1/accounts/update_credentials): validation with Mastodon's limits,
// bio and field rendering to safe HTML, avatar/header processing, and the AccountUpdated event
// (federated later as an Update of the actor).
import { isQuotePolicySetting } from '../quotes/policy.ts';
import type { Core } from '../context.ts';
import { ValidationError } from '../errors.ts';
import type { NewEvent } from '../events/outbox.ts';
import { collection } from '../db/mongo.ts';
import {
  accounts,
  visibleAccountFilter,
  type AccountDoc,
  type ProfileField,
  type StoredImage,
} from '../model/accounts.ts';
import { users, type PostingPrivacy, type UserDoc } from '../model/users.ts';
import { formatStatusHtml, type MentionTarget } from '../text/formatStatus.ts';
import { extractEntities } from '../text/extract.ts';
import { graphemeLength } from '../text/countCharacters.ts';
import { storeProfileImage, deleteProfileImage, type ProfileImageKind } from './images.ts';
import { acceptAllFollowRequests } from '../graph/followRequests.ts';

export const DISPLAY_NAME_MAX = 30;
export const NOTE_MAX = 500;
export const FIELDS_MAX = 4;
export const FIELD_TEXT_MAX = 255;
/** Mastodon's Account::AttributionDomains::ATTRIBUTION_DOMAINS_LIMIT. */
export const ATTRIBUTION_DOMAINS_MAX = 100;
/** Mastodon's Account::Avatar/Header validation: MediaAttachment::MAX_DESCRIPTION_LENGTH. */
export const IMAGE_DESCRIPTION_MAX = 1500;
/** The images' descriptions: the change's key, Mastodon's label in messages, its attribute. */
const IMAGE_DESCRIPTIONS = [
  ['avatarDescription', 'Avatar description', 'avatar_description'],
  ['headerDescription', 'Header description', 'header_description'],
] as const;
export const DEFAULT_PRIVACY_VALUES: readonly PostingPrivacy[] = ['public', 'unlisted', 'private'];

export interface ProfileChanges {
  displayName?: string;
  note?: string;
  locked?: boolean;
  bot?: boolean;
  discoverable?: boolean;
  indexable?: boolean;
  hideCollections?: boolean;
  /** Profile tabs (Mastodon 4.6). */
  showMedia?: boolean;
  showMediaReplies?: boolean;
  showFeatured?: boolean;
  /** Normalised by normaliseAttributionDomains. */
  attributionDomains?: string[];
  noindex?: boolean;
  fields?: { name: string; value: string }[];
  avatar?: Buffer;
  header?: Buffer;
  /** Alt texts of the images (Mastodon 4.6); "" clears one. */
  avatarDescription?: string;
  headerDescription?: string;
  privacy?: string;
  sensitive?: boolean;
  /** ISO 639-1 code; "" or null clears it. */
  language?: string | null;
  /** Who may quote new posts by default (Mastodon 4.5 `source[quote_policy]`). */
  quotePolicy?: string;
  /** Languages of the public timelines (Mastodon's chosen_languages); empty or null: all. */
  chosenLanguages?: string[] | null;
}

export class ProfileValidationError extends ValidationError {}

/**
 * `attribution_domains[]` as Mastodon normalises it: trimmed, without a scheme or a leading `*.`,
 * blanks dropped, each once, lower-cased (domains compare case-insensitively).
 */
export function normaliseAttributionDomains(values: readonly unknown[]): string[] {
  const out = values
    .map((v) =>
      String(v)
        .trim()
        .replace(/^https?:\/\//, '')
        .replace(/^\*\./, '')
        .toLowerCase(),
    )
    .filter((v) => v !== '');
  return [...new Set(out)];
}

function isDomainName(value: string): boolean {
  return (
    value.length <= 253 &&
    value.split('.').length >= 2 &&
    value.split('.').every((label) => /^(?!-)[\p{L}\p{N}-]{1,63}(?<!-)$/u.test(label))
  );
}

/** Rails-style messages, e.g. "Display name is too long (maximum is 30 characters)". */
export function validateProfile(changes: ProfileChanges): string[] {
  const problems: string[] = [];
  if (changes.displayName !== undefined && graphemeLength(changes.displayName) > DISPLAY_NAME_MAX) {
    problems.push(`Display name is too long (maximum is ${DISPLAY_NAME_MAX} characters)`);
  }
  if (changes.note !== undefined && graphemeLength(changes.note) > NOTE_MAX) {
    problems.push(`Note is too long (maximum is ${NOTE_MAX} characters)`);
  }
  if (changes.fields) {
    if (changes.fields.length > FIELDS_MAX) problems.push(`Fields is too long (maximum is ${FIELDS_MAX} fields)`);
    for (const f of changes.fields) {
      if (graphemeLength(f.name) > FIELD_TEXT_MAX || graphemeLength(f.value) > FIELD_TEXT_MAX) {
        problems.push(`Fields name and value can be at most ${FIELD_TEXT_MAX} characters`);
        break;
      }
    }
  }
  if (changes.attributionDomains) {
    if (changes.attributionDomains.length > ATTRIBUTION_DOMAINS_MAX)
      problems.push(`Attribution domains is too long (maximum is ${ATTRIBUTION_DOMAINS_MAX} characters)`);
    else if (!changes.attributionDomains.every(isDomainName))
      problems.push('Attribution domains is not a valid domain name');
  }
  for (const [key, label] of IMAGE_DESCRIPTIONS) {
    const text = changes[key];
    if (text !== undefined && graphemeLength(text) > IMAGE_DESCRIPTION_MAX)
      problems.push(`${label} is too long (maximum is ${IMAGE_DESCRIPTION_MAX} characters)`);
  }
  if (changes.privacy !== undefined && !(DEFAULT_PRIVACY_VALUES as readonly string[]).includes(changes.privacy)) {
    problems.push('Setting default privacy is not included in the list');
  }
  if (changes.quotePolicy !== undefined && !isQuotePolicySetting(changes.quotePolicy)) {
    problems.push('Setting default quote policy is not included in the list');
  }
  if (
    changes.language !== undefined &&
    changes.language !== null &&
    changes.language !== '' &&
    !/^[a-z]{2,3}$/.test(changes.language)
  ) {
    problems.push('Setting default language is not included in the list');
  }
  if (changes.chosenLanguages && changes.chosenLanguages.some((l) => !/^[a-z]{2,3}$/.test(l))) {
    problems.push('Chosen languages is not included in the list');
  }
  return problems;
}

/** Local mentions in a bio resolve to profile links; remote ones stay text until federation knows them. */
async function mentionResolver(
  core: Core,
  text: string,
): Promise<(username: string, domain: string | null) => MentionTarget | null> {
  const names = [
    ...new Set(
      extractEntities(text)
        .filter((e) => e.kind === 'mention' && (e.domain === null || e.domain === core.config.localDomain))
        .map((e) => (e.kind === 'mention' ? e.username.toLowerCase() : '')),
    ),
  ].slice(0, 50);
  const found = names.length
    ? await collection(core.db, accounts)
        .find(
          { usernameLower: { $in: names }, domain: null, ...visibleAccountFilter },
          { projection: { usernameLower: 1, username: 1, url: 1 } },
        )
        .toArray()
    : [];
  return (username, domain) => {
    if (domain !== null && domain !== core.config.localDomain) return null;
    const a = found.find((x) => x.usernameLower === username.toLowerCase());
    return a ? { url: a.url, display: a.username } : null;
  };
}

export async function renderNote(core: Core, text: string): Promise<string> {
  return formatStatusHtml(text, { baseUrl: core.config.baseUrl, resolveMention: await mentionResolver(core, text) });
}

/** A field value as HTML: links shortened, `rel="me"` so other servers can verify them. */
export function renderFieldValue(core: Core, value: string): string {
  const html = formatStatusHtml(value.replace(/\n+/g, ' '), {
    baseUrl: core.config.baseUrl,
    resolveMention: () => null,
  });
  return html
    .replace(/^<p>/, '')
    .replace(/<\/p>$/, '')
    .replace(/rel="nofollow noopener"/g, 'rel="nofollow noopener me"');
}

export async function updateProfile(
  core: Core,
  account: AccountDoc,
  user: UserDoc,
  changes: ProfileChanges,
): Promise<{ account: AccountDoc; user: UserDoc }> {
  const problems = validateProfile(changes);
  if (problems.length > 0) throw new ProfileValidationError(problems.join(', '));

  const set: Partial<AccountDoc> = {};
  const changed: string[] = [];
  if (changes.displayName !== undefined) {
    set.displayName = changes.displayName.trim();
    set.displayNameLower = set.displayName.toLowerCase();
    changed.push('display_name');
  }
  if (changes.note !== undefined) {
    set.noteSource = changes.note;
    set.note = await renderNote(core, changes.note);
    changed.push('note');
  }
  for (const [key, attr] of [
    ['locked', 'locked'],
    ['bot', 'bot'],
    ['discoverable', 'discoverable'],
    ['indexable', 'indexable'],
    ['hideCollections', 'hide_collections'],
    ['noindex', 'noindex'],
    ['showMedia', 'show_media'],
    ['showMediaReplies', 'show_media_replies'],
    ['showFeatured', 'show_featured'],
  ] as const) {
    const v = changes[key];
    if (v !== undefined) {
      set[key] = v;
      changed.push(attr);
    }
  }
  if (changes.attributionDomains) {
    set.attributionDomains = changes.attributionDomains;
    changed.push('attribution_domains');
  }
  if (changes.fields) {
    const kept = changes.fields.filter((f) => f.name.trim() !== '' || f.value.trim() !== '');
    set.fieldsSource = kept.map((f) => ({ name: f.name.trim(), value: f.value.trim() }));
    set.fields = kept.map((f): ProfileField => {
      // A verification survives only while the field's value stays the same.
      const before = account.fieldsSource.findIndex((o) => o.value === f.value.trim());
      return {
        name: f.name.trim(),
        value: renderFieldValue(core, f.value.trim()),
        verifiedAt: before >= 0 ? (account.fields[before]?.verifiedAt ?? null) : null,
      };
    });
    changed.push('fields');
  }
  for (const [key, , attr] of IMAGE_DESCRIPTIONS) {
    const text = changes[key];
    if (text !== undefined) {
      set[key] = text.trim();
      changed.push(attr);
    }
  }
  const replaced: (StoredImage | null)[] = [];
  for (const kind of ['avatar', 'header'] as ProfileImageKind[]) {
    const data = changes[kind];
    if (data) {
      set[kind] = await storeProfileImage(core, account._id, kind, data);
      replaced.push(account[kind]);
      changed.push(kind);
    }
  }

  const userSet: Record<string, unknown> = {};
  if (changes.privacy !== undefined) userSet['settings.defaultPrivacy'] = changes.privacy;
  if (changes.sensitive !== undefined) userSet['settings.defaultSensitive'] = changes.sensitive;
  if (changes.language !== undefined) userSet['settings.defaultLanguage'] = changes.language || null;
  if (changes.quotePolicy !== undefined) userSet['settings.defaultQuotePolicy'] = changes.quotePolicy;
  if (changes.chosenLanguages !== undefined)
    userSet['settings.chosenLanguages'] = changes.chosenLanguages?.length
      ? [...new Set(changes.chosenLanguages)]
      : null;
  if (Object.keys(userSet).length > 0) changed.push('source');

  const now = new Date();
  const event: NewEvent<'AccountUpdated'> = {
    ...accountUpdatedEvent(account, changed),
    verify: { collection: accounts.name, filter: { _id: account._id, updatedAt: now }, expect: 'exists' },
  };
  await core.outbox.write([event], async () => {
    await collection(core.db, accounts).updateOne({ _id: account._id }, { $set: { ...set, updatedAt: now } });
    if (Object.keys(userSet).length > 0) {
      await collection(core.db, users).updateOne({ _id: user._id }, { $set: { ...userSet, updatedAt: now } });
    }
  });
  for (const old of replaced) await deleteProfileImage(core, old);
  const [a, u] = await Promise.all([
    collection(core.db, accounts).findOne({ _id: account._id }),
    collection(core.db, users).findOne({ _id: user._id }),
  ]);
  if (!a || !u) throw new Error(`account ${account._id} vanished during an update`);
  // Unlocking accepts every pending follow request (Mastodon's UnlockAccountService).
  if (account.locked && !a.locked) await acceptAllFollowRequests(core, a);
  return { account: a, user: u };
}

/** The AccountUpdated event of an account (without its outbox verification). */
export function accountUpdatedEvent(
  account: Pick<AccountDoc, '_id' | 'username' | 'domain'>,
  changed: string[],
): Omit<NewEvent<'AccountUpdated'>, 'verify'> {
  return {
    type: 'AccountUpdated',
    key: String(account._id),
    payload: { accountId: String(account._id), username: account.username, domain: account.domain, changed },
  };
}

/** DELETE /api/v1/profile/avatar|header: back to the placeholder. */
export async function removeProfileImage(core: Core, account: AccountDoc, kind: ProfileImageKind): Promise<AccountDoc> {
  if (!account[kind]) return account;
  const now = new Date();
  await core.outbox.write(
    [
      {
        ...accountUpdatedEvent(account, [kind]),
        verify: { collection: accounts.name, filter: { _id: account._id, updatedAt: now }, expect: 'exists' },
      } satisfies NewEvent<'AccountUpdated'>,
    ],
    async () => {
      // The alt text described the image that is gone.
      await collection(core.db, accounts).updateOne(
        { _id: account._id },
        { $set: { [kind]: null, [`${kind}Description`]: '', updatedAt: now } },
      );
    },
  );
  await deleteProfileImage(core, account[kind]);
  return { ...account, [kind]: null, [`${kind}Description`]: '', updatedAt: now };
}
