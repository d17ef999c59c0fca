// The "E-mail me when…" part of /settings/preferences/notifications: the choices a user is
// offered (staff ones only to the staff they concern), as the page shows them and as the form
// sends them back (`notification_emails.<key>` checkboxes, Mastodon's setting names).
import type { FastifyRequest } from 'fastify';
import type { Core } from '../../core/context.ts';
import type { UserDoc } from '../../core/model/users.ts';
import {
  notificationEmailsOf,
  offeredEmailKeys,
  STAFF_EMAIL_PERMISSIONS,
  type NotificationEmails,
} from '../../core/users/notificationEmails.ts';
import { formCheckbox } from '../forms.ts';
import type { Translate } from '../i18n.ts';

export interface EmailChoice {
  name: string;
  label: string;
  checked: boolean;
}

/** The page's checkboxes: everyone's, then the staff ones, then "always send". */
export async function emailChoices(
  core: Core,
  user: UserDoc,
  t: Translate,
): Promise<{ personal: EmailChoice[]; staff: EmailChoice[]; always: boolean }> {
  const chosen = notificationEmailsOf(user);
  const choices = (await offeredEmailKeys(core, user)).map((key) => ({
    key,
    name: `notification_emails.${key}`,
    label: t(`preferences.notifications.emails.${key}`),
    checked: chosen[key],
  }));
  const strip = ({ name, label, checked }: EmailChoice) => ({ name, label, checked });
  return {
    personal: choices.filter((c) => !STAFF_EMAIL_PERMISSIONS[c.key]).map(strip),
    staff: choices.filter((c) => STAFF_EMAIL_PERMISSIONS[c.key]).map(strip),
    always: user.settings.alwaysSendEmails ?? false,
  };
}

/** The submitted choices of the keys the page offered (a checkbox not sent is off). */
export async function submittedEmailChoices(
  core: Core,
  user: UserDoc,
  request: FastifyRequest,
): Promise<{ changes: Partial<NotificationEmails>; always: boolean }> {
  const offered = await offeredEmailKeys(core, user);
  return {
    changes: Object.fromEntries(offered.map((key) => [key, formCheckbox(request, `notification_emails.${key}`)])),
    always: formCheckbox(request, 'always_send_emails'),
  };
}
