// The outbox relay: publishes events whose writer died (or could not reach Kafka) between the
// MongoDB write and the publish, and drops those whose write never happened (see core/events/outbox.ts).
// Runs in a loop; several relays may run at once (records are claimed with a lease).
import type { Core } from '../../services/core/context.ts';
import { outboxRelayed } from '../../services/core/metrics.ts';

export interface OutboxRelay {
  stop(): Promise<void>;
}

export function runOutboxRelay(core: Core, opts: { intervalMs?: number; batch?: number } = {}): OutboxRelay {
  const intervalMs = opts.intervalMs ?? 1_000;
  const batch = opts.batch ?? 100;
  const logger = core.logger.child({ pipeline: 'outbox' });
  let running = true;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const idle = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, intervalMs);
    });

  const loop = (async () => {
    while (running) {
      let published = 0;
      try {
        published = await core.outbox.relayPending(batch);
        if (published > 0) {
          outboxRelayed.inc(published);
          logger.info({ published }, 'outbox relay published pending events');
        }
      } catch (err) {
        logger.error({ err }, 'outbox relay round failed');
      }
      // A full round means more may be waiting: go on at once.
      if (running && published < batch) await idle();
    }
  })();

  return {
    async stop() {
      running = false;
      clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}
