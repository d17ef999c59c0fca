// The SMTP transport of the mailer (nodemailer), from Mastodon's SMTP_* settings.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../../services/core/config.ts';

export function createSmtpTransport(config: Config): Transporter {
  const { server, port, login, password } = config.smtp;
  return nodemailer.createTransport({
    host: server,
    port,
    // Port 465 is implicit TLS; others upgrade with STARTTLS when the server offers it.
    secure: port === 465,
    auth: login ? { user: login, pass: password ?? '' } : undefined,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
}
