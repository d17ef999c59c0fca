// Rendering of the e-mails we send: subject, plain text and HTML from a template and its variables.
// Variables are escaped in the HTML part.
import type { MailTemplate, NotificationMailTemplate } from './request.ts';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

interface Link {
  label: string;
  url: string;
}

const anchor = (link: Link) => `<a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a>`;

function layout(title: string, paragraphs: string[], action?: Link, footer: Link[] = []): string {
  const body = paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  const button = action ? `<p>${anchor(action)}</p>` : '';
  const links = footer.length ? `\n<p>${footer.map(anchor).join(' · ')}</p>` : '';
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>\n<h1>${escapeHtml(title)}</h1>\n${body}\n${button}${links}\n</body></html>`;
}

/** Mastodon's notification_mailer texts (config/locales/en.yml): title, subject, body and action. */
const NOTIFICATION_TEXTS: Record<
  NotificationMailTemplate,
  { title: string; subject: (name: string) => string; body: (name: string) => string; action: string }
> = {
  mention: {
    title: 'New mention',
    subject: (name) => `You were mentioned by ${name}`,
    body: (name) => `You were mentioned by ${name} in:`,
    action: 'Reply',
  },
  follow: {
    title: 'New follower',
    subject: (name) => `${name} is now following you`,
    body: (name) => `${name} is now following you!`,
    action: 'View profile',
  },
  follow_request: {
    title: 'New follow request',
    subject: (name) => `Pending follower: ${name}`,
    body: (name) => `${name} has requested to follow you`,
    action: 'Manage follow requests',
  },
  favourite: {
    title: 'New favorite',
    subject: (name) => `${name} favorited your post`,
    body: (name) => `Your post was favorited by ${name}:`,
    action: 'View post',
  },
  reblog: {
    title: 'New boost',
    subject: (name) => `${name} boosted your post`,
    body: (name) => `Your post was boosted by ${name}:`,
    action: 'View post',
  },
};

/**
 * A notification e-mail. Variables: `name` (the acct of who did it), `status` (the post's plain
 * text, when it is about one), `link` (the post or the account), `preferences` (where to choose
 * e-mails), `unsubscribe` (the one-click link that turns this kind off, as Mastodon's footer).
 */
function notificationMail(template: NotificationMailTemplate, v: Record<string, string>): RenderedMail {
  const texts = NOTIFICATION_TEXTS[template];
  const name = v.name ?? '';
  const footer = `You are receiving this e-mail because you chose it on ${v.instance ?? 'Mastodon'}.`;
  const links = [
    { label: 'Change email preferences', url: v.preferences ?? '' },
    ...(v.unsubscribe ? [{ label: 'Unsubscribe', url: v.unsubscribe }] : []),
  ];
  const lines = [texts.body(name), ...(v.status ? [v.status] : [])];
  return {
    subject: texts.subject(name),
    text: `${lines.join('\n\n')}\n\n${texts.action}: ${v.link ?? ''}\n\n${footer}\n${links.map((l) => `${l.label}: ${l.url}`).join('\n')}\n`,
    html: layout(texts.title, [...lines, footer], { label: texts.action, url: v.link ?? '' }, links),
  };
}

/**
 * A notice: its paragraphs and, when it points to a page, the page's address after them (a button
 * in HTML, when there is an address).
 */
function noticeMail(
  subject: string,
  title: string,
  lines: string[],
  link?: { label: string; url: string | undefined },
): RenderedMail {
  return {
    subject,
    text: `${lines.join('\n\n')}\n${link ? `\n${link.url ?? ''}\n` : ''}`,
    html: layout(title, lines, link?.url ? { label: link.label, url: link.url } : undefined),
  };
}

export function renderMail(template: MailTemplate, v: Record<string, string>): RenderedMail {
  const instance = v.instance ?? 'Mastodon';
  switch (template) {
    case 'mention':
    case 'follow':
    case 'follow_request':
    case 'favourite':
    case 'reblog':
      return notificationMail(template, v);
    case 'confirmation': {
      const subject = `${instance}: Confirmation instructions for ${instance}`;
      const lines = [
        `Hi ${v.username ?? ''}, please confirm your e-mail address to finish signing up to ${instance}.`,
        'To confirm, follow this link:',
      ];
      return {
        subject,
        text: `${lines.join('\n\n')}\n\n${v.link}\n\nIf this wasn't you, please ignore this e-mail.\n`,
        html: layout('One more step!', [...lines.slice(0, 1), "If this wasn't you, please ignore this e-mail."], {
          label: 'Verify e-mail address',
          url: v.link ?? '',
        }),
      };
    }
    case 'reconfirmation': {
      // Mastodon's UserMailer#reconfirmation_instructions: a new address of a confirmed user.
      const subject = `${instance}: Confirm e-mail for ${instance}`;
      const lines = [
        `Hi ${v.username ?? ''}, you requested to change the e-mail address of your account on ${instance} to this one.`,
        'To confirm, follow this link:',
      ];
      return {
        subject,
        text: `${lines.join('\n\n')}\n\n${v.link}\n\nIf this wasn't you, please ignore this e-mail.\n`,
        html: layout('Confirm e-mail address', [lines[0], "If this wasn't you, please ignore this e-mail."], {
          label: 'Verify e-mail address',
          url: v.link ?? '',
        }),
      };
    }
    case 'reset_password_instructions': {
      const subject = `${instance}: Reset password instructions`;
      const lines = [
        `Hi ${v.username ?? ''}, someone requested a link to change your password on ${instance}.`,
        'To change your password, follow this link within 6 hours:',
      ];
      const tail =
        "If you didn't request this, please ignore this e-mail. Your password won't change until you follow the link and set a new one.";
      return {
        subject,
        text: `${lines.join('\n\n')}\n\n${v.link}\n\n${tail}\n`,
        html: layout('Password reset', [lines[0], tail], { label: 'Change password', url: v.link ?? '' }),
      };
    }
    case 'backup_ready': {
      // Mastodon's UserMailer#backup_ready.
      const subject = `${instance}: Your archive is ready for download`;
      const lines = [
        `Hi ${v.username ?? ''}, the archive of your data on ${instance} is ready for download.`,
        'Download it from your data export page within 7 days:',
      ];
      return {
        subject,
        text: `${lines.join('\n\n')}\n\n${v.link}\n`,
        html: layout('Your archive is ready for download', lines, { label: 'Download archive', url: v.link ?? '' }),
      };
    }
    case 'password_change': {
      const subject = `${instance}: Password changed`;
      const lines = [
        `Hi ${v.username ?? ''}, the password for your account on ${instance} has been changed.`,
        'If you did not change your password, it is likely that someone has gained access to your account. Please change your password immediately or contact the server admin if you are locked out of your account.',
      ];
      return noticeMail(subject, 'Password changed', lines);
    }
    case 'email_changed': {
      const subject = `${instance}: E-mail changed`;
      const lines = [
        `Hi ${v.username ?? ''}, the e-mail address for your account on ${instance} is being changed to ${v.email ?? ''}.`,
        'If you did not change your e-mail, it is likely that someone has gained access to your account. Please change your password immediately or contact the server admin if you are locked out of your account.',
      ];
      return noticeMail(subject, 'E-mail changed', lines);
    }
    case 'approved': {
      const subject = `${instance}: Your account has been approved`;
      const line = `Your account on ${instance} has been approved. You can now log in.`;
      return noticeMail(subject, 'Welcome aboard!', [line], { label: 'Log in', url: v.link });
    }
    case 'new_report': {
      // To staff who may manage reports (Mastodon's AdminMailer#new_report).
      const subject = `New report for ${instance} (#${v.reportId ?? ''})`;
      const lines = [
        `Hi ${v.username ?? ''},`,
        `${v.reporter ?? 'Someone'} has reported ${v.target ?? 'an account'}.`,
        v.comment ? `Comment: ${v.comment}` : 'No comment was given.',
      ];
      return noticeMail(subject, 'New report', lines, { label: 'View report', url: v.link });
    }
    case 'new_pending_account': {
      // Mastodon's AdminMailer#new_pending_account.
      const subject = `New account up for review on ${instance} (${v.newcomer ?? ''})`;
      const lines = [
        `Hi ${v.username ?? ''},`,
        'The details of the new account are below. You can approve or reject this application.',
        `Username: ${v.newcomer ?? ''}`,
        `E-mail: ${v.email ?? ''}`,
        v.reason ? `Reason: ${v.reason}` : 'No reason was given.',
      ];
      return noticeMail(subject, 'New account up for review', lines, { label: 'Review account', url: v.link });
    }
    case 'warning': {
      // To the owner of an account a moderator acted on (Mastodon's UserMailer#warning).
      const subject = v.subject ?? `A moderator of ${instance} has taken action on your account`;
      const lines = [v.summary ?? subject, v.text ? `Note from the moderators: ${v.text}` : ''].filter(Boolean);
      return noticeMail(subject, subject, lines);
    }
    case 'trends_review': {
      // Mastodon's AdminMailer#new_trends: what waits for review before it can trend.
      const subject = `${instance}: New trends up for review`;
      const lines = [
        `Hi ${v.username ?? ''}, the following items need a review before they can be displayed publicly:`,
        v.items ?? '',
      ];
      return noticeMail(subject, 'New trends up for review', lines, { label: 'Review trends', url: v.link });
    }
  }
}
