// E-mails are jobs: the producer renders the mail and records a `MailRequested` event through the
// outbox; the mailer pipeline sends it over SMTP. Nothing sends mail inline.
import type { NewEvent, Verification } from '../events/outbox.ts';
import { renderMail } from './templates.ts';

export type MailTemplate =
  | 'confirmation'
  | 'reconfirmation'
  | 'approved'
  | 'new_report'
  | 'new_pending_account'
  | 'warning'
  | 'trends_review'
  | 'reset_password_instructions'
  | 'password_change'
  | 'email_changed'
  | 'backup_ready'
  | NotificationMailTemplate;

/** Mastodon's NotificationMailer: the notification types that have an e-mail. */
export const NOTIFICATION_MAIL_TEMPLATES = ['mention', 'follow', 'follow_request', 'favourite', 'reblog'] as const;
export type NotificationMailTemplate = (typeof NOTIFICATION_MAIL_TEMPLATES)[number];

export interface MailRequest {
  to: string;
  template: MailTemplate;
  /** Kafka key: mails to one recipient stay in order (e.g. the user id). */
  key: string;
  variables: Record<string, string>;
  /** Extra headers (notification mails: List-ID and the one-click List-Unsubscribe). */
  headers?: Record<string, string>;
}

export function mailRequestedEvent(mail: MailRequest, verify: Verification): NewEvent<'MailRequested'> {
  const rendered = renderMail(mail.template, mail.variables);
  return {
    type: 'MailRequested',
    key: mail.key,
    payload: {
      to: mail.to,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      template: mail.template,
      headers: mail.headers ?? null,
    },
    verify,
  };
}
