// GET /api/v1/instance/activity: twelve weeks (Monday 00:00 UTC, newest first) of local statuses,
// sign-ins and registrations, as Mastodon reports them (every number a string). Statuses are
// counted by id range (status ids start with their creation time); sign-ins by the users whose last
// sign-in fell in the week, since a sign-in history is not kept.
import type { Core } from '../context.ts';
import { collection } from '../db/mongo.ts';
import { statusIdFloor } from '../ids.ts';
import { statuses } from '../model/statuses.ts';
import { users } from '../model/users.ts';

export interface ActivityWeek {
  week: string;
  statuses: string;
  logins: string;
  registrations: string;
}

const WEEK_MS = 7 * 86_400_000;

/** Monday 00:00 UTC of the week holding `at`. */
export function weekStart(at: Date): Date {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  return new Date(day.getTime() - sinceMonday * 86_400_000);
}

export async function instanceActivity(core: Core, now = new Date(), weeks = 12): Promise<ActivityWeek[]> {
  const first = weekStart(now);
  const starts = Array.from({ length: weeks }, (_, i) => new Date(first.getTime() - i * WEEK_MS));
  return Promise.all(
    starts.map(async (start) => {
      const end = new Date(start.getTime() + WEEK_MS);
      const [posted, loggedIn, registered] = await Promise.all([
        collection(core.db, statuses).countDocuments({
          _id: { $gte: statusIdFloor(start), $lt: statusIdFloor(end) },
          local: true,
          reblogOfId: null,
          deletedAt: null,
        }),
        collection(core.db, users).countDocuments({ lastSignInAt: { $gte: start, $lt: end } }),
        collection(core.db, users).countDocuments({ createdAt: { $gte: start, $lt: end } }),
      ]);
      return {
        week: String(Math.floor(start.getTime() / 1000)),
        statuses: String(posted),
        logins: String(loggedIn),
        registrations: String(registered),
      };
    }),
  );
}
