// The mailer pipeline: sends the e-mails requested through `MailRequested` events over SMTP.
// Delivery is at-least-once, so each event is sent once through the runtime's eventId deduper;
// an SMTP failure releases the claim and the runtime retries with backoff, then dead-letters.
import type { Transporter } from 'nodemailer';
import type { Core } from '../../services/core/context.ts';
import { runPipeline, type Pipeline, type PipelineOverrides } from '../runtime/index.ts';
import { createSmtpTransport } from './transport.ts';

export const TYPES = ['MailRequested'] as const;

export type MailerPipelineOptions = PipelineOverrides<'MailRequested'> & {
  /** Another transport (tests use the real SMTP transport against a local SMTP server). */
  transport?: Transporter;
};

export async function runMailerPipeline(core: Core, opts: MailerPipelineOptions = {}): Promise<Pipeline> {
  const { transport: given, ...runtime } = opts;
  const transport = given ?? createSmtpTransport(core.config);
  const pipeline = await runPipeline({
    core,
    name: 'mailer',
    types: TYPES,
    ...runtime,
    async handleEvent(event, ctx) {
      const mail = event.payload;
      await ctx.dedup.once(event.eventId, async () => {
        const info = await transport.sendMail({
          from: core.config.smtp.fromAddress,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html ?? undefined,
          headers: { ...mail.headers, 'X-Mail-Template': mail.template, 'Auto-Submitted': 'auto-generated' },
        });
        ctx.logger.info({ eventId: event.eventId, template: mail.template, messageId: info.messageId }, 'mail sent');
      });
    },
  });
  return {
    ...pipeline,
    async stop() {
      await pipeline.stop();
      if (!given) transport.close();
    },
  };
}
