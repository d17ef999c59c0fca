// A real SMTP server (smtp-server) on a free port that keeps what it receives, for the mailer tests.
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { eventually } from './eventually.ts';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The text/plain part, decoded from quoted-printable. */
  text: string;
}

function decodeQuotedPrintable(s: string): string {
  const bytes = s
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function textPart(raw: string): string {
  const m =
    /Content-Type: text\/plain[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*?Content-Transfer-Encoding: ([\w-]+)\r?\n\r?\n([\s\S]*?)\r?\n(?:--|$)/i.exec(
      raw,
    );
  if (!m) return raw;
  const [, encoding, body] = m;
  if (/quoted-printable/i.test(encoding)) return decodeQuotedPrintable(body);
  if (/base64/i.test(encoding)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

export class SmtpSink {
  readonly mails: ReceivedMail[] = [];
  /** Recipients refused with a temporary error (see refuseNext). */
  readonly refused: string[] = [];
  private readonly toRefuse = new Map<string, number>();
  private server: SMTPServer | null = null;
  port = 0;

  /** Answers the next `times` deliveries to `address` with 451 (try again later). */
  refuseNext(address: string, times: number): void {
    this.toRefuse.set(address, times);
  }

  async start(): Promise<void> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        const left = this.toRefuse.get(address.address) ?? 0;
        if (left > 0) {
          this.toRefuse.set(address.address, left - 1);
          this.refused.push(address.address);
          const err = new Error('Mailbox busy, try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          return callback(err);
        }
        callback();
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const subject = /^Subject: (.*)$/m.exec(raw)?.[1]?.trim() ?? '';
          this.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            subject,
            text: textPart(raw),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.server.address() as AddressInfo).port;
  }

  /** Waits for a mail to `to` (beyond the first `skip` ones). */
  waitFor(to: string, skip = 0, ms = 30_000): Promise<ReceivedMail> {
    return eventually(
      async () => this.mails.filter((m) => m.to.includes(to))[skip],
      ms,
      `mail number ${skip + 1} to ${to}`,
    );
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export function confirmationLink(mail: ReceivedMail): string {
  const m = /(https?:\/\/\S+\/auth\/confirmation\?confirmation_token=[\w%-]+)/.exec(mail.text);
  if (!m) throw new Error(`no confirmation link in mail:\n${mail.text}`);
  return m[1];
}
