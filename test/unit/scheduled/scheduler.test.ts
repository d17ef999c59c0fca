import { runScheduler, type SchedulerJob } from '../../../pipelines/scheduler/index.ts';
import { parseScheduledAt } from '../../../services/api/scheduled_statuses/index.ts';
import { createLogger } from '../../../services/core/logger.ts';
import type { Core } from '../../../services/core/context.ts';

const core = { logger: createLogger('silent', 'test') } as unknown as Core;

describe('scheduler loop', () => {
  it('runs every job each round, rate-limits slow jobs, survives failures and stops cleanly', async () => {
    const runs: string[] = [];
    let thirdRound!: () => void;
    const threeRounds = new Promise<void>((r) => (thirdRound = r));
    const jobs: SchedulerJob[] = [
      { name: 'often', run: async () => (runs.push('often'), 0) },
      { name: 'hourly', everyMs: 3600_000, run: async () => (runs.push('hourly'), 0) },
      {
        name: 'broken',
        run: async () => {
          runs.push('broken');
          // The last job of a round: three rounds are complete once it ran three times.
          if (runs.filter((r) => r === 'broken').length === 3) thirdRound();
          throw new Error('boom');
        },
      },
    ];
    const scheduler = runScheduler(core, { intervalMs: 5, jobs, workerId: 'w1' });
    await threeRounds;
    await scheduler.stop();
    expect(scheduler.workerId).toBe('w1');
    expect(runs.filter((r) => r === 'often').length).toBeGreaterThanOrEqual(3);
    expect(runs.filter((r) => r === 'broken').length).toBeGreaterThanOrEqual(3);
    expect(runs.filter((r) => r === 'hourly')).toHaveLength(1);
    const after = runs.length;
    // Nothing runs after stop(): a negative, shown by waiting several intervals.
    await new Promise((r) => setTimeout(r, 30));
    expect(runs.length).toBe(after);
  });
});

describe('scheduled_at parameter', () => {
  it('takes ISO 8601 times and refuses the rest', () => {
    expect(parseScheduledAt('2031-01-02T03:04:05.000Z').toISOString()).toBe('2031-01-02T03:04:05.000Z');
    expect(parseScheduledAt('2031-01-02T03:04:05+02:00').toISOString()).toBe('2031-01-02T01:04:05.000Z');
    expect(() => parseScheduledAt('tomorrow')).toThrow('Invalid date supplied');
    expect(() => parseScheduledAt('')).toThrow('param is missing or the value is empty: scheduled_at');
  });
});
