// Server settings (manage_settings, Mastodon's /admin/settings/...): registrations (mode and the
// closed-registrations message), about (title, descriptions, contact, privacy policy, terms),
// branding (the server thumbnail and app icon) and discovery (feed access, who sees the moderated
// servers). Written through the same core setting
// operations as the command line; the instance documents' cache is dropped by them.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { asValidation, type AdminArea, type Staff } from './kit.ts';
import type { RegistrationsMode } from '../../core/config.ts';
import {
  DOMAIN_BLOCKS_VISIBILITIES,
  getInstanceSettings,
  setInstanceSettings,
  type DomainBlocksVisibility,
  type InstanceSettings,
} from '../../core/instance/settings.ts';
import { REGISTRATIONS_MODES, getRegistrationsMode, setRegistrationsMode } from '../../core/settings/settings.ts';
import {
  FEED_ACCESS_SETTINGS,
  FEED_ACCESS_VALUES,
  getFeedAccess,
  isFeedAccess,
  setFeedAccess,
} from '../../core/settings/feedAccess.ts';
import { validationFailed } from '../../core/errors.ts';
import {
  ThumbnailError,
  clearThumbnail,
  parseThumbnail,
  setAppIcon,
  setThumbnail,
  thumbnailEntity,
} from '../../core/instance/siteUploads.ts';
import { formCheckbox } from '../forms.ts';

const SECTIONS = ['registrations', 'about', 'branding', 'discovery'] as const;
type Section = (typeof SECTIONS)[number];
/** Longest text a setting takes (Mastodon's site texts are unbounded: this keeps a page sane). */
const TEXT_MAX = 100_000;

function one<T extends string>(allowed: readonly T[], value: string, name: string): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw validationFailed(`${name} is not included in the list`);
}

const settingsPages: AdminArea = (app, { core, asStaff, view, attempt, field }) => {
  async function settingsPage(reply: FastifyReply, me: Staff, section: Section, error: string | null = null) {
    const [site, mode, feeds] = await Promise.all([
      getInstanceSettings(core),
      getRegistrationsMode(core),
      getFeedAccess(core),
    ]);
    return view(
      reply,
      me,
      'settings',
      `admin.settings.${section}`,
      {
        section,
        sections: SECTIONS,
        site,
        mode,
        modes: REGISTRATIONS_MODES,
        feeds,
        feedSettings: FEED_ACCESS_SETTINGS,
        feedValues: FEED_ACCESS_VALUES,
        visibilities: DOMAIN_BLOCKS_VISIBILITIES,
        thumbnail: (() => {
          const stored = parseThumbnail(site.thumbnailKey);
          return stored ? thumbnailEntity(core, stored).url : null;
        })(),
        error,
      },
      error ? 422 : 200,
    );
  }

  const text = (request: FastifyRequest, name: string) => field(request, name).length;
  const long = (request: FastifyRequest, name: string) => {
    const value = (request.body as Record<string, unknown> | undefined)?.[name];
    if (typeof value === 'string' && value.length > TEXT_MAX)
      throw validationFailed(`Text is too long (maximum is ${TEXT_MAX} characters)`);
    return typeof value === 'string' ? value : '';
  };

  const save: Record<Section, (request: FastifyRequest) => Promise<void>> = {
    registrations: async (request) => {
      const mode = one<RegistrationsMode>(
        REGISTRATIONS_MODES,
        field(request, 'registrations_mode'),
        'Registrations mode',
      );
      const message = long(request, 'closed_registrations_message');
      await setRegistrationsMode(core, mode);
      await setInstanceSettings(core, { closedRegistrationsMessage: message });
    },
    about: async (request) => {
      if (text(request, 'site_title') > 200)
        throw validationFailed('Site title is too long (maximum is 200 characters)');
      const changes: Partial<InstanceSettings> = {
        siteTitle: field(request, 'site_title'),
        siteShortDescription: long(request, 'site_short_description'),
        siteExtendedDescription: long(request, 'site_extended_description'),
        siteContactEmail: field(request, 'site_contact_email', 320),
        siteContactUsername: field(request, 'site_contact_username', 30),
        privacyPolicy: long(request, 'site_privacy_policy'),
        termsOfService: long(request, 'site_terms'),
      };
      await setInstanceSettings(core, changes);
    },
    branding: async (request) => {
      const thumbnail = request.uploads?.thumbnail?.data;
      const icon = request.uploads?.app_icon?.data;
      if (thumbnail?.length) await asValidation(setThumbnail(core, thumbnail), ThumbnailError);
      else if (formCheckbox(request, 'remove_thumbnail')) await clearThumbnail(core);
      if (icon?.length) await asValidation(setAppIcon(core, icon), ThumbnailError);
    },
    discovery: async (request) => {
      const visibility = (name: string) =>
        one<DomainBlocksVisibility>(DOMAIN_BLOCKS_VISIBILITIES, field(request, name), 'Visibility');
      const feeds = FEED_ACCESS_SETTINGS.map((name) => {
        const value = field(request, name);
        if (!isFeedAccess(value)) throw validationFailed('Feed access is not included in the list');
        return [name, value] as const;
      });
      const showDomainBlocks = visibility('show_domain_blocks');
      const showDomainBlocksRationale = visibility('show_domain_blocks_rationale');
      for (const [name, value] of feeds) await setFeedAccess(core, name, value);
      await setInstanceSettings(core, { showDomainBlocks, showDomainBlocksRationale });
    },
  };

  app.get<{ Params: { section: string } }>(
    '/admin/settings/:section',
    asStaff('manage_settings', async (request, reply, me) => {
      const section = SECTIONS.find((s) => s === request.params.section);
      if (!section) return reply.callNotFound();
      return settingsPage(reply, me, section);
    }),
  );

  app.post<{ Params: { section: string } }>(
    '/admin/settings/:section',
    { preHandler: app.csrfProtection },
    asStaff('manage_settings', async (request, reply, me) => {
      const section = SECTIONS.find((s) => s === request.params.section);
      if (!section) return reply.callNotFound();
      const error = await attempt(() => save[section](request));
      if (error) return settingsPage(reply, me, section, error);
      return reply.redirect(`/admin/settings/${section}`, 303);
    }),
  );
};

export default settingsPages;
