// The admin action log (Mastodon's Admin::ActionLog): who did what to which record, for audit.
import type { Id } from '../ids.ts';
import { defineCollection } from '../db/mongo.ts';

export interface AdminActionDoc {
  _id: Id;
  /** The acting account; null when done from the command line. */
  accountId: Id | null;
  /** Mastodon's action names: approve, reject, confirm, change_role, disable, enable, ... */
  action: string;
  targetType:
    | 'User'
    | 'Account'
    | 'UserRole'
    | 'Setting'
    | 'Report'
    | 'DomainBlock'
    | 'DomainAllow'
    | 'EmailDomainBlock'
    | 'CanonicalEmailBlock'
    | 'IpBlock'
    | 'Status'
    | 'AccountWarning';
  targetId: string;
  /** Readable name of the target at the time (username, setting name). */
  humanIdentifier: string;
  /** Extra facts, e.g. the new role. */
  details: Record<string, string | number | boolean | null>;
  createdAt: Date;
}

export const adminActions = defineCollection<AdminActionDoc>('admin_action_logs', [
  { key: { createdAt: -1 }, name: 'created' },
  { key: { targetType: 1, targetId: 1 }, name: 'target' },
]);
