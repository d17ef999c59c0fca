// The mailer pipeline on real Kafka and a real SMTP server: a MailRequested event written through
// the outbox is sent once; an SMTP server that refuses at first gets the mail on a retry.
import type { Core } from '../../../services/core/context.ts';
import { mailRequestedEvent } from '../../../services/core/mail/request.ts';
import { runMailerPipeline } from '../../../pipelines/mailer/index.ts';
import type { Pipeline } from '../../../pipelines/runtime/index.ts';
import { testConfig } from '../../support/config.ts';
import { closeTestCore, createTestCore } from '../../support/core.ts';
import { consumerTuning } from '../../support/kafka.ts';
import { SmtpSink } from '../../support/smtpSink.ts';

describe('mailer pipeline', () => {
  const smtp = new SmtpSink();
  let core: Core;
  let mailer: Pipeline;

  beforeAll(async () => {
    await smtp.start();
    // The refused delivery is logged as a warning on purpose; keep the test output clean.
    ({ core } = await createTestCore(
      testConfig({
        SMTP_SERVER: '127.0.0.1',
        SMTP_PORT: String(smtp.port),
        SMTP_FROM_ADDRESS: 'robot@social.test',
        LOG_LEVEL: 'error',
      }),
    ));
    mailer = await runMailerPipeline(core, { ...consumerTuning, retryDelaysMs: [300] });
  });

  afterAll(async () => {
    await mailer?.stop();
    if (core) await closeTestCore(core);
    await smtp.stop();
  });

  async function request(to: string): Promise<void> {
    // A job with no entity of its own: verified by a marker document written with it.
    const marker = core.db.collection<{ _id: string }>('mail_test_markers');
    await core.outbox.write(
      [
        mailRequestedEvent(
          {
            to,
            template: 'confirmation',
            key: to,
            variables: {
              username: 'zoe',
              instance: 'social.test',
              link: 'https://social.test/auth/confirmation?confirmation_token=abc',
            },
          },
          { collection: 'mail_test_markers', filter: { _id: to }, expect: 'exists' },
        ),
      ],
      async () => {
        await marker.insertOne({ _id: to });
      },
    );
  }

  it('renders and sends a requested mail over SMTP', async () => {
    await request('zoe@example.test');
    const mail = await smtp.waitFor('zoe@example.test');
    expect(mail.from).toBe('robot@social.test');
    expect(mail.subject).toBe('social.test: Confirmation instructions for social.test');
    expect(mail.text).toContain('https://social.test/auth/confirmation?confirmation_token=abc');
    expect(mail.raw).toMatch(/Content-Type: text\/html/);
    expect(mail.raw).toMatch(/X-Mail-Template: confirmation/);
  });

  it('retries when the SMTP server refuses, and delivers once', async () => {
    smtp.refuseNext('flaky@example.test', 1);
    await request('flaky@example.test');
    const mail = await smtp.waitFor('flaky@example.test');
    expect(mail.subject).toContain('Confirmation instructions');
    expect(smtp.refused).toContain('flaky@example.test');
    expect(smtp.mails.filter((m) => m.to.includes('flaky@example.test'))).toHaveLength(1);
  });
});
