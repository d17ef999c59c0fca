// An API whose mail reaches a real SMTP sink: the notifications and mailer pipelines and the
// scheduler's notification-mail job run in this process, so what notifies or mails someone arrives
// in `smtp.mails`. Notification e-mails wait `notificationEmailDelay` seconds (default 0; Mastodon's
// two minutes in production). `close()` stops it all.
import { runNotificationsPipeline } from '../../pipelines/notifications/index.ts';
import { runMailerPipeline } from '../../pipelines/mailer/index.ts';
import { JOBS, runScheduler } from '../../pipelines/scheduler/index.ts';
import { startTestApi, type TestApi } from './api.ts';
import { consumerTuning } from './kafka.ts';
import { SmtpSink } from './smtpSink.ts';

export interface MailingApi {
  api: TestApi;
  smtp: SmtpSink;
  close(): Promise<void>;
}

export async function startMailingApi(opts: { notificationEmailDelay?: number } = {}): Promise<MailingApi> {
  const smtp = new SmtpSink();
  await smtp.start();
  const api = await startTestApi({
    SMTP_SERVER: '127.0.0.1',
    SMTP_PORT: String(smtp.port),
    NOTIFICATION_EMAIL_DELAY: String(opts.notificationEmailDelay ?? 0),
  });
  const pipelines = [
    await runNotificationsPipeline(api.core, consumerTuning),
    await runMailerPipeline(api.core, { ...consumerTuning, retryDelaysMs: [300] }),
  ];
  const scheduler = runScheduler(api.core, {
    intervalMs: 100,
    jobs: JOBS.filter((j) => j.name === 'notification-mails'),
  });
  return {
    api,
    smtp,
    async close() {
      await scheduler.stop();
      for (const p of pipelines) await p.stop();
      await api.close();
      await smtp.stop();
    },
  };
}
