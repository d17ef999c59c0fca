// The scheduler: a timer-driven job runner (not a Kafka consumer). Each round it publishes due
// scheduled statuses, closes expired polls, sends poll Updates due after votes, ends expired mutes and sends notification e-mails whose wait is over; hourly it removes uploads nobody attached and remote media cached longer than MEDIA_CACHE_RETENTION_PERIOD; every ten minutes it re-checks remote quote stamps a week old. Any number of scheduler processes may run: every job
// claims its records atomically in MongoDB, so each record is handled by one process.
// Add a job by appending it to JOBS.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Core } from '../../services/core/context.ts';
import { publishDueScheduledStatuses } from '../../services/core/scheduledStatuses/scheduledStatuses.ts';
import { closeExpiredPolls, publishDuePollUpdates } from '../../services/core/polls/polls.ts';
import { pruneClaims } from '../../services/core/scheduledStatuses/claims.ts';
import { removeUnattachedMedia } from '../../services/core/media/removal.ts';
import { vacuumMediaCache } from '../../services/core/media/remoteCache.ts';
import { endExpiredMutes } from '../../services/core/graph/mute.ts';
import { deleteExpiredSuspensions } from '../../services/core/moderation/accountRemoval.ts';
import { refreshStaleQuotes } from '../../services/core/quotes/ingress.ts';
import { processImports } from '../../services/core/userData/importProcessing.ts';
import { processAccountDeletions } from '../../services/core/users/selfDelete.ts';
import { processArchives } from '../../services/core/userData/archive.ts';
import { sendDueNotificationMails } from '../../services/core/notifications/dueEmails.ts';

export interface SchedulerJob {
  name: string;
  /** Run at most this often (default: every round). */
  everyMs?: number;
  /** One round; returns how many records it handled (a full round is repeated at once). */
  run(core: Core, workerId: string): Promise<number>;
}

export const JOBS: SchedulerJob[] = [
  {
    name: 'scheduled-statuses',
    run: async (core, workerId) => (await publishDueScheduledStatuses(core, { workerId, limit: 50 })).length,
  },
  { name: 'poll-expiry', run: (core, workerId) => closeExpiredPolls(core, { workerId, limit: 100 }) },
  { name: 'poll-updates', run: (core, workerId) => publishDuePollUpdates(core, { workerId, limit: 100 }) },
  { name: 'mute-expiry', run: (core) => endExpiredMutes(core) },
  { name: 'notification-mails', run: (core, workerId) => sendDueNotificationMails(core, { workerId }) },
  { name: 'unattached-media-cleanup', everyMs: 3600_000, run: (core) => removeUnattachedMedia(core) },
  { name: 'media-cache-vacuum', everyMs: 3600_000, run: (core) => vacuumMediaCache(core) },
  { name: 'suspended-account-data', everyMs: 3600_000, run: (core) => deleteExpiredSuspensions(core) },
  { name: 'quote-stamp-refresh', everyMs: 600_000, run: (core) => refreshStaleQuotes(core) },
  { name: 'bulk-imports', run: (core) => processImports(core) },
  { name: 'account-deletions', run: (core) => processAccountDeletions(core) },
  { name: 'archives', run: (core) => processArchives(core) },
  {
    name: 'claim-pruning',
    everyMs: 3600_000,
    run: async (core) => {
      await pruneClaims(core);
      return 0;
    },
  },
];

export interface Scheduler {
  readonly workerId: string;
  /** Runs one round of every job now (tests, and the loop itself). */
  tick(): Promise<number>;
  stop(): Promise<void>;
}

export function runScheduler(
  core: Core,
  opts: { intervalMs?: number; jobs?: SchedulerJob[]; workerId?: string } = {},
): Scheduler {
  const intervalMs = opts.intervalMs ?? 1_000;
  const jobs = opts.jobs ?? JOBS;
  const workerId = opts.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const logger = core.logger.child({ pipeline: 'scheduler', workerId });
  let running = true;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  const lastRun = new Map<string, number>();
  const tick = async (): Promise<number> => {
    let handled = 0;
    for (const job of jobs) {
      if (!running) break;
      if (job.everyMs && Date.now() - (lastRun.get(job.name) ?? 0) < job.everyMs) continue;
      lastRun.set(job.name, Date.now());
      try {
        const n = await job.run(core, workerId);
        if (n > 0) logger.info({ job: job.name, handled: n }, 'scheduler job handled records');
        handled += n;
      } catch (err) {
        logger.error({ err, job: job.name }, 'scheduler job failed; retrying next round');
      }
    }
    return handled;
  };

  const loop = (async () => {
    while (running) {
      await tick();
      if (!running) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, intervalMs);
      });
    }
  })();

  return {
    workerId,
    tick,
    async stop() {
      running = false;
      clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}
