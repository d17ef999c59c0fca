// The instance's self-description an administrator edits (Mastodon's site settings): title,
// descriptions, contact, thumbnail, what the public instance APIs reveal. One document per key in
// `settings`, under Mastodon's setting names; every change drops the cached instance documents.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { settings } from '../model/settings.ts';
import { invalidateInstanceCache } from './cache.ts';

/** Who may read GET /api/v1/instance/domain_blocks (Mastodon's `show_domain_blocks`). */
export type DomainBlocksVisibility = 'disabled' | 'users' | 'all';
export const DOMAIN_BLOCKS_VISIBILITIES: readonly DomainBlocksVisibility[] = ['disabled', 'users', 'all'];

export interface InstanceSettings {
  siteTitle: string;
  /** Plain text: Instance.description, V1 short_description, NodeInfo nodeDescription. */
  siteShortDescription: string;
  /** HTML: /api/v1/instance/extended_description. */
  siteExtendedDescription: string;
  /** HTML: /api/v1/instance/privacy_policy (a default one when empty). */
  privacyPolicy: string;
  /** HTML: /api/v1/instance/terms_of_service (404 when empty). */
  termsOfService: string;
  siteContactEmail: string;
  /** Username of the local contact account. */
  siteContactUsername: string;
  /** HTML shown when registrations are closed. */
  closedRegistrationsMessage: string;
  /** Storage key of the uploaded thumbnail (null: the default image). */
  thumbnailKey: string | null;
  /** Storage keys of the app icon by size, as JSON (null: none uploaded). */
  appIconKeys: string | null;
  showDomainBlocks: DomainBlocksVisibility;
  showDomainBlocksRationale: DomainBlocksVisibility;
  peersApiEnabled: boolean;
  activityApiEnabled: boolean;
}

/** Setting name in the collection (Mastodon's) for each field, and its default. */
const KEYS: { [K in keyof InstanceSettings]: [string, InstanceSettings[K]] } = {
  siteTitle: ['site_title', ''],
  siteShortDescription: ['site_short_description', ''],
  siteExtendedDescription: ['site_extended_description', ''],
  privacyPolicy: ['site_privacy_policy', ''],
  termsOfService: ['site_terms', ''],
  siteContactEmail: ['site_contact_email', ''],
  siteContactUsername: ['site_contact_username', ''],
  closedRegistrationsMessage: ['closed_registrations_message', ''],
  thumbnailKey: ['thumbnail', null],
  appIconKeys: ['app_icon', null],
  showDomainBlocks: ['show_domain_blocks', 'disabled'],
  showDomainBlocksRationale: ['show_domain_blocks_rationale', 'disabled'],
  peersApiEnabled: ['peers_api_enabled', true],
  activityApiEnabled: ['activity_api_enabled', true],
};

type Field = keyof InstanceSettings;

function accept<K extends Field>(field: K, value: unknown): InstanceSettings[K] | undefined {
  const fallback = KEYS[field][1];
  if (field === 'showDomainBlocks' || field === 'showDomainBlocksRationale')
    return (DOMAIN_BLOCKS_VISIBILITIES as readonly unknown[]).includes(value)
      ? (value as InstanceSettings[K])
      : undefined;
  if (fallback === null)
    return typeof value === 'string' || value === null ? (value as InstanceSettings[K]) : undefined;
  return typeof value === typeof fallback ? (value as InstanceSettings[K]) : undefined;
}

export async function getInstanceSettings(core: Core): Promise<InstanceSettings> {
  const fields = Object.keys(KEYS) as Field[];
  const docs = await collection(core.db, settings)
    .find({ _id: { $in: fields.map((f) => KEYS[f][0]) } })
    .toArray();
  const byName = new Map(docs.map((d) => [d._id, d.value]));
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const stored = byName.has(KEYS[f][0]) ? accept(f, byName.get(KEYS[f][0])) : undefined;
    out[f] = stored === undefined ? KEYS[f][1] : stored;
  }
  return out as unknown as InstanceSettings;
}

export async function setInstanceSettings(core: Core, changes: Partial<InstanceSettings>): Promise<void> {
  const coll = collection(core.db, settings);
  for (const [field, value] of Object.entries(changes) as [Field, InstanceSettings[Field]][]) {
    if (value === undefined) continue;
    if (accept(field, value) === undefined) throw new Error(`invalid value for ${field}`);
    await coll.updateOne({ _id: KEYS[field][0] }, { $set: { value, updatedAt: new Date() } }, { upsert: true });
  }
  await invalidateInstanceCache(core);
}

/** When a setting last changed (null: never set). */
export async function instanceSettingUpdatedAt(core: Core, field: Field): Promise<Date | null> {
  const doc = await collection(core.db, settings).findOne({ _id: KEYS[field][0] });
  return doc?.updatedAt ?? null;
}
