// An API whose mail reaches a real SMTP sink: the notifications and mailer pipelines run in this
// process, so what notifies or mails someone arrives in `smtp.mails`. `close()` stops it all.
import { runNotificationsPipeline } from '../../pipelines/notifications/index.ts';
import { runMailerPipeline } from '../../pipelines/mailer/index.ts';
import { startTestApi, type TestApi } from './api.ts';
import { consumerTuning } from './kafka.ts';
import { SmtpSink } from './smtpSink.ts';

export interface MailingApi {
  api: TestApi;
  smtp: SmtpSink;
  close(): Promise<void>;
}

export async function startMailingApi(): Promise<MailingApi> {
  const smtp = new SmtpSink();
  await smtp.start();
  const api = await startTestApi({ SMTP_SERVER: '127.0.0.1', SMTP_PORT: String(smtp.port) });
  const pipelines = [
    await runNotificationsPipeline(api.core, consumerTuning),
    await runMailerPipeline(api.core, { ...consumerTuning, retryDelaysMs: [300] }),
  ];
  return {
    api,
    smtp,
    async close() {
      for (const p of pipelines) await p.stop();
      await api.close();
      await smtp.stop();
    },
  };
}
