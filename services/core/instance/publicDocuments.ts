// The public documents about this server that the instance API (/api/v1|v2/instance...) and the
// public pages (landing, about, privacy policy, terms) show: built once here from the settings,
// rules, statistics and domain blocks, cached in Redis (cache.ts) and dropped whenever an
// administrator changes what they show.
import type { Core } from '../context.ts';
import { getFeedAccess } from '../settings/feedAccess.ts';
import { instanceStats } from './stats.ts';
import { getRegistrationsMode } from '../settings/settings.ts';
import { cachedDocument } from './cache.ts';
import { getInstanceSettings, instanceSettingUpdatedAt } from './settings.ts';
import { listRules } from './rules.ts';
import { asHtml, defaultPrivacyPolicy } from './documents.ts';
import { iconEntities, parseThumbnail, thumbnailEntity } from './siteUploads.ts';
import { presentDomainBlocks, publicDomainBlocks, type DomainBlockEntity } from './domainBlocks.ts';
import { findLocalAccountByUsername } from '../accounts/create.ts';
import { presentAccount } from '../entities/account.ts';
import { presentInstance, presentInstanceV1, presentRule, type InstanceFacts } from '../entities/instance.ts';

/** How long the documents live in the cache at most (admin changes drop them sooner). */
export const DOCUMENT_SECONDS = 180;

export async function instanceFacts(core: Core): Promise<InstanceFacts> {
  const [mode, stats, site, ruleDocs, feedAccess] = await Promise.all([
    getRegistrationsMode(core),
    instanceStats(core),
    getInstanceSettings(core),
    listRules(core),
    getFeedAccess(core),
  ]);
  const contact = site.siteContactUsername ? await findLocalAccountByUsername(core, site.siteContactUsername) : null;
  const thumbnail = parseThumbnail(site.thumbnailKey);
  return {
    title: site.siteTitle || core.config.localDomain,
    description: site.siteShortDescription,
    contactEmail: site.siteContactEmail,
    contactAccount: contact && contact.suspendedAt === null ? await presentAccount(core, contact) : null,
    registrations: {
      enabled: mode !== 'closed' && !core.config.omniauthOnly,
      approvalRequired: mode === 'approved',
      message: site.closedRegistrationsMessage ? asHtml(site.closedRegistrationsMessage) : null,
    },
    stats,
    rules: ruleDocs.map(presentRule),
    thumbnail: thumbnail ? thumbnailEntity(core, thumbnail) : null,
    termsOfService: site.termsOfService.trim() !== '',
    icon: iconEntities(core, site.appIconKeys),
    feedAccess,
  };
}

/** The Instance entity of GET /api/v2/instance. */
export function instanceV2(core: Core) {
  return cachedDocument(core, 'v2', DOCUMENT_SECONDS, async () => presentInstance(core, await instanceFacts(core)));
}

/** The V1 Instance entity of GET /api/v1/instance. */
export function instanceV1(core: Core) {
  return cachedDocument(core, 'v1', DOCUMENT_SECONDS, async () => presentInstanceV1(core, await instanceFacts(core)));
}

export function instanceRules(core: Core) {
  return cachedDocument(core, 'rules', DOCUMENT_SECONDS, async () => (await listRules(core)).map(presentRule));
}

export interface HtmlDocument {
  updated_at: string | null;
  content: string;
}

export function extendedDescription(core: Core): Promise<HtmlDocument> {
  return cachedDocument(core, 'extended_description', DOCUMENT_SECONDS, async () => {
    const site = await getInstanceSettings(core);
    // As Mastodon: no date while there is no description.
    if (!site.siteExtendedDescription) return { updated_at: null, content: '' };
    const at = await instanceSettingUpdatedAt(core, 'siteExtendedDescription');
    return { updated_at: (at ?? new Date()).toISOString(), content: asHtml(site.siteExtendedDescription) };
  });
}

/** Mastodon's date of its default privacy policy (PrivacyPolicy::DEFAULT_UPDATED_AT). */
const DEFAULT_POLICY_DATE = new Date(Date.UTC(2022, 9, 7));

export function privacyPolicy(core: Core): Promise<HtmlDocument> {
  return cachedDocument(core, 'privacy_policy', DOCUMENT_SECONDS, async () => {
    const site = await getInstanceSettings(core);
    if (!site.privacyPolicy)
      return { updated_at: DEFAULT_POLICY_DATE.toISOString(), content: defaultPrivacyPolicy(core) };
    const at = await instanceSettingUpdatedAt(core, 'privacyPolicy');
    return { updated_at: (at ?? new Date()).toISOString(), content: asHtml(site.privacyPolicy) };
  });
}

export interface TermsOfServiceDocument {
  effective_date: string;
  effective: boolean;
  content: string;
  succeeded_by: string | null;
}

/** The terms of service, or null when the server has none. */
export function termsOfService(core: Core): Promise<TermsOfServiceDocument | null> {
  return cachedDocument(core, 'terms_of_service', DOCUMENT_SECONDS, async () => {
    const site = await getInstanceSettings(core);
    if (!site.termsOfService.trim()) return null;
    const at = (await instanceSettingUpdatedAt(core, 'termsOfService')) ?? new Date();
    return {
      effective_date: at.toISOString().slice(0, 10),
      effective: true,
      content: asHtml(site.termsOfService),
      succeeded_by: null,
    };
  });
}

/**
 * The moderated servers as the `show_domain_blocks` setting lets this reader see them:
 * 'disabled' (never shown), 'login' (only to signed-in users), or the list (with the rationale
 * when `show_domain_blocks_rationale` allows).
 */
export async function moderatedServers(
  core: Core,
  signedIn: boolean,
): Promise<'disabled' | 'login' | DomainBlockEntity[]> {
  const site = await getInstanceSettings(core);
  const visible = (v: typeof site.showDomainBlocks) => v === 'all' || (v === 'users' && signedIn);
  if (site.showDomainBlocks === 'disabled') return 'disabled';
  if (!visible(site.showDomainBlocks)) return 'login';
  return presentDomainBlocks(await publicDomainBlocks(core), visible(site.showDomainBlocksRationale));
}
