// Moderation notifications: `admin.report` to staff who may manage reports (ReportCreated),
// `admin.sign_up` to staff who may manage users (a local AccountCreated), and
// `moderation_warning` to the owner of a local account that got a strike (AccountWarningCreated).
import type { Core } from '../../services/core/context.ts';
import type { NotificationRequest } from '../../services/core/notifications/notify.ts';
import type { EventPayload } from '../../schemas/index.ts';
import { staffWith } from '../../services/core/moderation/staff.ts';

export const MODERATION_TYPES = ['ReportCreated', 'AccountCreated', 'AccountWarningCreated'] as const;
export type ModerationEvent = (typeof MODERATION_TYPES)[number];

type Notify = (core: Core, r: NotificationRequest) => Promise<unknown>;

export async function handleModerationEvent(
  core: Core,
  event: { [K in ModerationEvent]: { type: K; payload: EventPayload<K> } }[ModerationEvent],
  notify: Notify,
): Promise<void> {
  switch (event.type) {
    case 'ReportCreated': {
      const p = event.payload;
      const reporter = BigInt(p.accountId);
      for (const staff of await staffWith(core, 'manage_reports'))
        await notify(core, {
          type: 'admin.report',
          accountId: staff.accountId,
          fromAccountId: reporter,
          reportId: BigInt(p.reportId),
          variant: p.reportId,
        });
      return;
    }
    case 'AccountCreated': {
      const p = event.payload;
      if (p.domain !== null) return;
      const newcomer = BigInt(p.accountId);
      for (const staff of await staffWith(core, 'manage_users'))
        await notify(core, { type: 'admin.sign_up', accountId: staff.accountId, fromAccountId: newcomer });
      return;
    }
    case 'AccountWarningCreated': {
      const p = event.payload;
      const target = BigInt(p.targetAccountId);
      await notify(core, {
        type: 'moderation_warning',
        accountId: target,
        fromAccountId: target,
        warningId: BigInt(p.warningId),
        variant: p.warningId,
      });
      return;
    }
  }
}
