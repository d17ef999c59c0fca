// Admin commands for the instance's self-description, rules, custom emojis and announcements:
//   instance show | instance set KEY VALUE | instance thumbnail FILE | instance thumbnail --remove | instance icon FILE
//   rules list | rules add TEXT [--hint H] [--priority N] | rules edit ID [--text T] [--hint H] [--priority N] | rules remove ID
//   emoji list | emoji add SHORTCODE FILE [--category C] [--unlisted] | emoji remove SHORTCODE
//   emoji modify SHORTCODE [--category C | --no-category] [--disable | --enable] [--unlisted | --listed]
//   emoji import FILE.tar.gz [--prefix P] [--suffix S] [--overwrite] [--category C] [--unlisted]   (tootctl's)
//   emoji purge [--remote-only]
//   announcements list | announcements create TEXT [--starts-at T --ends-at T] [--all-day] [--publish]
//   announcements edit ID [--text T] [--starts-at T] [--ends-at T] [--all-day | --not-all-day]
//   announcements publish ID | announcements unpublish ID | announcements delete ID
// Input that needs no database is checked by the parser (so mistakes fail before connecting).
import type { Core } from '../core/context.ts';
import { parseId, type Id } from '../core/ids.ts';
import { findLocalAccountByUsername } from '../core/accounts/create.ts';
import {
  DOMAIN_BLOCKS_VISIBILITIES,
  getInstanceSettings,
  setInstanceSettings,
  type DomainBlocksVisibility,
  type InstanceSettings,
} from '../core/instance/settings.ts';
import { setThumbnail, clearThumbnail, setAppIcon, ThumbnailError } from '../core/instance/siteUploads.ts';
import { addRule, listRules, removeRule, updateRule, RuleError } from '../core/instance/rules.ts';
import { EmojiError } from '../core/emojis/emojis.ts';
import {
  createAnnouncement,
  deleteAnnouncement,
  listAllAnnouncements,
  setPublished,
  updateAnnouncement,
  AnnouncementError,
} from '../core/announcements/announcements.ts';
import { CliError, commandArgs, readInputFile, type Out } from './commands.ts';
import { emojiCommand } from './emojiCommands.ts';

export type SiteCommand = (core: Core, out: Out) => Promise<void>;

/** `instance set` keys: the setting each writes and how its value is read. */
const TEXT_KEYS: Record<string, keyof InstanceSettings> = {
  title: 'siteTitle',
  description: 'siteShortDescription',
  'extended-description': 'siteExtendedDescription',
  'privacy-policy': 'privacyPolicy',
  terms: 'termsOfService',
  'contact-email': 'siteContactEmail',
  'registrations-message': 'closedRegistrationsMessage',
};
const TEXT_LIMIT = 100_000;

function onOff(key: string, value: string): boolean {
  if (value === 'on' || value === 'true') return true;
  if (value === 'off' || value === 'false') return false;
  throw new CliError(`instance set ${key} takes on or off`);
}

function id(raw: string | undefined, what: string): Id {
  const parsed = parseId(raw);
  if (parsed === null) throw new CliError(`${what} needs a numeric ID`);
  return parsed;
}

function date(raw: string | undefined, flag: string): Date | undefined {
  if (raw === undefined) return undefined;
  const d = new Date(raw);
  if (Number.isNaN(d.getTime())) throw new CliError(`${flag} must be a date and time, e.g. 2026-12-24T18:00:00Z`);
  return d;
}

/** Domain errors become one-line CLI errors. */
export async function friendly<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (
      err instanceof RuleError ||
      err instanceof EmojiError ||
      err instanceof ThumbnailError ||
      err instanceof AnnouncementError
    )
      throw new CliError(err.message);
    throw err;
  }
}

function instanceCommand(action: string | undefined, rest: string[]): SiteCommand {
  if (action === 'show') {
    return async (core, out) => {
      const s = await getInstanceSettings(core);
      for (const [k, v] of Object.entries(s)) out(`${k}: ${JSON.stringify(v)}`);
    };
  }
  if (action === 'set') {
    const [key, value, ...extra] = rest;
    if (key === undefined || value === undefined || extra.length > 0)
      throw new CliError('instance set takes a KEY and one VALUE (quote it)');
    if ([...value].length > TEXT_LIMIT) throw new CliError('value is too long');
    if (key in TEXT_KEYS) {
      if (key === 'contact-email' && value !== '' && !/^[^@\s]+@[^@\s]+$/.test(value))
        throw new CliError(`Invalid e-mail address: ${value}`);
      return async (core, out) => {
        await setInstanceSettings(core, { [TEXT_KEYS[key]]: value });
        out('OK');
      };
    }
    if (key === 'contact-account') {
      return async (core, out) => {
        if (value !== '' && !(await findLocalAccountByUsername(core, value)))
          throw new CliError(`No local account named ${value}`);
        await setInstanceSettings(core, { siteContactUsername: value });
        out('OK');
      };
    }
    if (key === 'domain-blocks' || key === 'domain-blocks-rationale') {
      if (!(DOMAIN_BLOCKS_VISIBILITIES as readonly string[]).includes(value))
        throw new CliError(`instance set ${key} takes one of: ${DOMAIN_BLOCKS_VISIBILITIES.join(', ')}`);
      const field = key === 'domain-blocks' ? 'showDomainBlocks' : 'showDomainBlocksRationale';
      return async (core, out) => {
        await setInstanceSettings(core, { [field]: value as DomainBlocksVisibility });
        out('OK');
      };
    }
    if (key === 'peers' || key === 'activity') {
      const on = onOff(key, value);
      return async (core, out) => {
        await setInstanceSettings(core, key === 'peers' ? { peersApiEnabled: on } : { activityApiEnabled: on });
        out('OK');
      };
    }
    throw new CliError(
      `Unknown instance setting "${key}"; use one of: ${[...Object.keys(TEXT_KEYS), 'contact-account', 'domain-blocks', 'domain-blocks-rationale', 'peers', 'activity'].join(', ')}`,
    );
  }
  if (action === 'thumbnail') {
    const { values, positionals } = commandArgs(rest, { remove: { type: 'boolean' } });
    if (values.remove) {
      if (positionals.length > 0) throw new CliError('instance thumbnail --remove takes no FILE');
      return async (core, out) => {
        await clearThumbnail(core);
        out('OK');
      };
    }
    if (positionals.length !== 1) throw new CliError('instance thumbnail needs exactly one FILE');
    return async (core, out) => {
      const data = await readInputFile(positionals[0]);
      await friendly(setThumbnail(core, data));
      out('OK');
    };
  }
  if (action === 'icon') {
    if (rest.length !== 1) throw new CliError('instance icon needs exactly one FILE');
    return async (core, out) => {
      const data = await readInputFile(rest[0]);
      await friendly(setAppIcon(core, data));
      out('OK');
    };
  }
  throw new CliError(`Unknown command: instance ${action ?? ''}`);
}

function rulesCommand(action: string | undefined, rest: string[]): SiteCommand {
  const options = {
    text: { type: 'string' },
    hint: { type: 'string' },
    priority: { type: 'string' },
  } as const;
  const priorityOf = (raw: string | undefined) => {
    if (raw === undefined) return undefined;
    if (!/^-?\d{1,6}$/.test(raw)) throw new CliError('--priority must be a whole number');
    return Number(raw);
  };
  if (action === 'list') {
    return async (core, out) => {
      for (const r of await listRules(core)) out(`${r._id}\t${r.priority}\t${r.text}${r.hint ? `\t(${r.hint})` : ''}`);
    };
  }
  if (action === 'add') {
    const { values, positionals } = commandArgs(rest, options);
    if (positionals.length !== 1) throw new CliError('rules add needs exactly one TEXT (quote it)');
    const priority = priorityOf(values.priority);
    return async (core, out) => {
      const rule = await friendly(addRule(core, { text: positionals[0], hint: values.hint, priority }));
      out(`OK ${rule._id}`);
    };
  }
  if (action === 'edit') {
    const { values, positionals } = commandArgs(rest, options);
    const ruleId = id(positionals[0], 'rules edit');
    const priority = priorityOf(values.priority);
    return async (core, out) => {
      const rule = await friendly(updateRule(core, ruleId, { text: values.text, hint: values.hint, priority }));
      if (!rule) throw new CliError(`No rule ${ruleId}`);
      out('OK');
    };
  }
  if (action === 'remove') {
    const ruleId = id(rest[0], 'rules remove');
    return async (core, out) => {
      if (!(await removeRule(core, ruleId))) throw new CliError(`No rule ${ruleId}`);
      out('OK');
    };
  }
  throw new CliError(`Unknown command: rules ${action ?? ''}`);
}

function announcementsCommand(action: string | undefined, rest: string[]): SiteCommand {
  const options = {
    text: { type: 'string' },
    'starts-at': { type: 'string' },
    'ends-at': { type: 'string' },
    'all-day': { type: 'boolean' },
    'not-all-day': { type: 'boolean' },
    publish: { type: 'boolean' },
  } as const;
  if (action === 'list') {
    return async (core, out) => {
      for (const a of await listAllAnnouncements(core))
        out(`${a._id}\t${a.published ? 'published' : 'draft'}\t${a.text.replace(/\s+/g, ' ').slice(0, 60)}`);
    };
  }
  if (action === 'create') {
    const { values, positionals } = commandArgs(rest, options);
    if (positionals.length !== 1) throw new CliError('announcements create needs exactly one TEXT (quote it)');
    const startsAt = date(values['starts-at'], '--starts-at') ?? null;
    const endsAt = date(values['ends-at'], '--ends-at') ?? null;
    return async (core, out) => {
      const a = await friendly(
        createAnnouncement(core, {
          text: positionals[0],
          startsAt,
          endsAt,
          allDay: values['all-day'] === true,
          publish: values.publish === true,
        }),
      );
      out(`OK ${a._id}`);
    };
  }
  if (action === 'edit') {
    const { values, positionals } = commandArgs(rest, options);
    const announcementId = id(positionals[0], 'announcements edit');
    if (values['all-day'] && values['not-all-day'])
      throw new CliError('--all-day and --not-all-day cannot be used together');
    const startsAt = date(values['starts-at'], '--starts-at');
    const endsAt = date(values['ends-at'], '--ends-at');
    const allDay = values['all-day'] ? true : values['not-all-day'] ? false : undefined;
    return async (core, out) => {
      await friendly(updateAnnouncement(core, announcementId, { text: values.text, startsAt, endsAt, allDay }));
      out('OK');
    };
  }
  if (action === 'publish' || action === 'unpublish' || action === 'delete') {
    const announcementId = id(rest[0], `announcements ${action}`);
    return async (core, out) => {
      if (action === 'delete') await friendly(deleteAnnouncement(core, announcementId));
      else await friendly(setPublished(core, announcementId, action === 'publish'));
      out('OK');
    };
  }
  throw new CliError(`Unknown command: announcements ${action ?? ''}`);
}

/** The command for argv, or null when argv is not one of these groups. */
export function parseSiteCommand(argv: string[]): SiteCommand | null {
  const [group, action, ...rest] = argv;
  if (group === 'instance') return instanceCommand(action, rest);
  if (group === 'rules') return rulesCommand(action, rest);
  if (group === 'emoji') return emojiCommand(action, rest);
  if (group === 'announcements') return announcementsCommand(action, rest);
  return null;
}

export const SITE_USAGE = `  cli instance show | instance set KEY VALUE | instance thumbnail FILE | instance thumbnail --remove | instance icon FILE
      (KEY: title, description, extended-description, privacy-policy, terms, contact-email, contact-account,
       registrations-message, domain-blocks, domain-blocks-rationale, peers, activity)
  cli rules list | rules add TEXT [--hint H] [--priority N] | rules edit ID [--text T] [--hint H] [--priority N] | rules remove ID
  cli emoji list | emoji add SHORTCODE FILE [--category C] [--unlisted] | emoji remove SHORTCODE
  cli emoji modify SHORTCODE [--category C | --no-category] [--disable | --enable] [--unlisted | --listed]
  cli emoji import FILE.tar.gz [--prefix P] [--suffix S] [--overwrite] [--category C] [--unlisted]
  cli emoji purge [--remote-only]
  cli announcements list | announcements create TEXT [--starts-at T --ends-at T] [--all-day] [--publish]
  cli announcements edit ID [--text T] [--starts-at T] [--ends-at T] [--all-day | --not-all-day]
  cli announcements publish ID | announcements unpublish ID | announcements delete ID`;
