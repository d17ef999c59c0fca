// Moderation commands of the admin command line (tootctl style):
//   accounts approve NAME | --all          accounts suspend ACCT [--text T]     accounts unsuspend ACCT
//   domains block DOMAIN [--severity silence|suspend|noop] [--reject-media] [--reject-reports]
//           [--private-comment T] [--public-comment T] [--obfuscate]
//   domains unblock DOMAIN                 domains purge DOMAIN
//   email-domain-blocks list | add DOMAIN [--with-approval] | remove DOMAIN
//   ip-blocks list | add CIDR --severity S [--comment T] [--duration SECONDS] | remove CIDR
//   reports list [--resolved]
//   statuses remove ID... [--text T] [--report ID] [--no-email]   (a moderator's removal: strike + notice)
//   action-log [--limit N]                                         (newest first: who did what to which record)
//   roles list | create NAME --permissions a,b [--position N] [--color C] [--highlighted] [--as USER]
//   roles update NAME [--require-2fa | --no-require-2fa] ...   (Mastodon's per-role two-factor requirement)
//         | update NAME [--permissions a,b] [--position N] [--as USER] | delete NAME [--as USER]
// Actions run as the command line (no acting account) unless --as names a staff member whose role
// limits what may be granted.
import { parseArgs } from 'node:util';
import type { Core } from '../core/context.ts';
import { collection } from '../core/db/mongo.ts';
import { accounts, type AccountDoc } from '../core/model/accounts.ts';
import { users } from '../core/model/users.ts';
import { reports } from '../core/model/reports.ts';
import { adminActions } from '../core/model/adminActions.ts';
import { roles, type RoleDoc } from '../core/model/roles.ts';
import { emailDomainBlocks, ipBlocks } from '../core/model/signUpBlocks.ts';
import { DomainError } from '../core/errors.ts';
import { findAccountByAcct } from '../core/accounts/queries.ts';
import { approveUser } from '../core/users/moderation.ts';
import {
  suspendAccount,
  unsuspendAccount,
  createStrike,
  removeStatusesByModerator,
} from '../core/moderation/accountActions.ts';
import { parseId } from '../core/ids.ts';
import {
  createDomainBlock,
  deleteDomainBlock,
  domainBlockByDomain,
  normalizeDomain,
} from '../core/moderation/domainBlocks.ts';
import { purgeDomain } from '../core/moderation/domainBlockEffects.ts';
import {
  createEmailDomainBlock,
  deleteEmailDomainBlock,
  emailDomainBlockByDomain,
} from '../core/moderation/emailBlocks.ts';
import { createIpBlock, deleteIpBlock, formatCidr, parseCidr } from '../core/moderation/ipBlocks.ts';
import { createCustomRole, deleteCustomRole, permissionNames, updateCustomRole } from '../core/moderation/roles.ts';
import { permissionMask } from '../core/roles/permissions.ts';
import { ensureBuiltInRoles, findRoleByName, roleOfUser, type EffectiveRole } from '../core/roles/roles.ts';
import { CliError, commandArgs, type Out } from './commands.ts';

export const MODERATION_USAGE = `  cli accounts approve NAME | --all
  cli accounts suspend ACCT [--text TEXT]
  cli accounts unsuspend ACCT
  cli domains block DOMAIN [--severity silence|suspend|noop] [--reject-media] [--reject-reports] [--private-comment T] [--public-comment T] [--obfuscate]
  cli domains unblock DOMAIN
  cli domains purge DOMAIN
  cli email-domain-blocks list | add DOMAIN [--with-approval] | remove DOMAIN
  cli ip-blocks list | add CIDR --severity sign_up_requires_approval|sign_up_block|no_access [--comment T] [--duration SECONDS] | remove CIDR
  cli reports list [--resolved]
  cli statuses remove ID... [--text TEXT] [--report ID] [--no-email]
  cli action-log [--limit N]
  cli roles list | create NAME --permissions P1,P2 [--position N] [--color C] [--highlighted] [--as USER] | update NAME [--permissions P1,P2] [--position N] [--require-2fa | --no-require-2fa] [--as USER] | delete NAME [--as USER]`;

type Command = (core: Core, out: Out) => Promise<void>;

/** ApiErrors of the core (validation, not found) become one-line CLI errors. */
async function guarded<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DomainError) throw new CliError(err.message);
    throw err;
  }
}

async function accountNamed(core: Core, acct: string): Promise<AccountDoc> {
  const account = await findAccountByAcct(core, acct);
  if (!account) throw new CliError(`No such account: ${acct}`);
  return account;
}

async function roleNamed(core: Core, name: string): Promise<RoleDoc> {
  const role = await findRoleByName(core, name);
  if (!role) throw new CliError(`Cannot find user role with that name: ${name}`);
  return role;
}

/** The role of the staff member named by --as (the grantor), null for the command line itself. */
async function grantorOf(core: Core, username: string | undefined): Promise<EffectiveRole | null> {
  if (!username) return null;
  const account = await accountNamed(core, username);
  const user = await collection(core.db, users).findOne({ accountId: account._id });
  if (!user) throw new CliError(`No user with such username: ${username}`);
  return roleOfUser(core, user);
}

function mask(list: string | undefined): number | undefined {
  if (list === undefined) return undefined;
  try {
    return permissionMask(
      list
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    );
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

function int(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d{1,9}$/.test(value)) throw new CliError(`${name} must be a whole number`);
  return Number(value);
}

/** The moderation command for argv, or null when argv is not one of them. */
export function parseModerationCommand(argv: string[]): Command | null {
  const [group, action, ...rest] = argv;
  const one = (positionals: string[], what: string): string => {
    if (positionals.length !== 1) throw new CliError(`${group} ${action} needs exactly one ${what}`);
    return positionals[0];
  };

  if (group === 'accounts' && action === 'approve') {
    const { values, positionals } = commandArgs(rest, { all: { type: 'boolean' } });
    if (!values.all && positionals.length !== 1) throw new CliError('accounts approve needs NAME or --all');
    return async (core, out) => {
      const pending = values.all
        ? await collection(core.db, users).find({ approved: false }).toArray()
        : [
            await (async () => {
              const account = await accountNamed(core, positionals[0]);
              const user = await collection(core.db, users).findOne({ accountId: account._id });
              if (!user) throw new CliError(`No user with such username: ${positionals[0]}`);
              return user;
            })(),
          ];
      for (const user of pending) await approveUser(core, user, null);
      out(`OK, approved ${pending.length}`);
    };
  }
  if (group === 'accounts' && (action === 'suspend' || action === 'unsuspend')) {
    const { values, positionals } = commandArgs(rest, { text: { type: 'string' } });
    const acct = one(positionals, 'ACCT');
    return async (core, out) => {
      const account = await accountNamed(core, acct);
      if (action === 'suspend') {
        if (account.suspendedAt) throw new CliError(`${acct} is suspended already`);
        await suspendAccount(core, account, null);
        await createStrike(core, account, { action: 'suspend', text: values.text ?? '' }, null);
      } else {
        if (!account.suspendedAt) throw new CliError(`${acct} is not suspended`);
        await unsuspendAccount(core, account, null);
      }
      out('OK');
    };
  }
  if (group === 'domains' && action === 'block') {
    const { values, positionals } = commandArgs(rest, {
      severity: { type: 'string' },
      'reject-media': { type: 'boolean' },
      'reject-reports': { type: 'boolean' },
      'private-comment': { type: 'string' },
      'public-comment': { type: 'string' },
      obfuscate: { type: 'boolean' },
    });
    const domain = one(positionals, 'DOMAIN');
    if (!normalizeDomain(domain)) throw new CliError(`Invalid domain: ${domain}`);
    return async (core, out) => {
      const block = await guarded(() =>
        createDomainBlock(
          core,
          {
            domain,
            severity: values.severity,
            rejectMedia: values['reject-media'],
            rejectReports: values['reject-reports'],
            privateComment: values['private-comment'],
            publicComment: values['public-comment'],
            obfuscate: values.obfuscate,
          },
          null,
        ),
      );
      out(`OK, ${block.domain} ${block.severity}`);
    };
  }
  if (group === 'domains' && (action === 'unblock' || action === 'purge')) {
    const { positionals } = commandArgs(rest, {});
    const domain = one(positionals, 'DOMAIN');
    const normal = normalizeDomain(domain);
    if (!normal) throw new CliError(`Invalid domain: ${domain}`);
    return async (core, out) => {
      if (action === 'unblock') {
        const block = await domainBlockByDomain(core, normal);
        if (!block) throw new CliError(`${normal} is not blocked`);
        await deleteDomainBlock(core, block._id, null);
        out('OK');
      } else {
        out(`OK, removed ${await purgeDomain(core, normal)} accounts`);
      }
    };
  }
  if (group === 'email-domain-blocks') {
    const { values, positionals } = commandArgs(rest, { 'with-approval': { type: 'boolean' } });
    if (action === 'list')
      return async (core, out) => {
        for (const b of await collection(core.db, emailDomainBlocks).find({}).sort({ _id: 1 }).toArray())
          out(`${b.domain}${b.allowWithApproval ? ' (with approval)' : ''}${b.parentId ? ' (mail server)' : ''}`);
      };
    const domain = one(positionals, 'DOMAIN');
    if (action === 'add')
      return async (core, out) => {
        const block = await guarded(() =>
          createEmailDomainBlock(core, { domain, allowWithApproval: values['with-approval'] }, null),
        );
        out(`OK, ${block.domain}`);
      };
    if (action === 'remove')
      return async (core, out) => {
        const block = await emailDomainBlockByDomain(core, domain);
        if (!block) throw new CliError(`${domain} is not blocked`);
        await deleteEmailDomainBlock(core, block._id, null);
        out('OK');
      };
  }
  if (group === 'ip-blocks') {
    const { values, positionals } = commandArgs(rest, {
      severity: { type: 'string' },
      comment: { type: 'string' },
      duration: { type: 'string' },
    });
    if (action === 'list')
      return async (core, out) => {
        for (const b of await collection(core.db, ipBlocks).find({}).sort({ _id: 1 }).toArray())
          out(`${b.ip} ${b.severity}${b.expiresAt ? ` until ${b.expiresAt.toISOString()}` : ''}`);
      };
    const ip = one(positionals, 'CIDR');
    const range = parseCidr(ip);
    if (!range) throw new CliError(`Invalid IP or range: ${ip}`);
    if (action === 'add') {
      if (!values.severity) throw new CliError('--severity is required');
      const expiresIn = int(values.duration, '--duration');
      return async (core, out) => {
        const block = await guarded(() =>
          createIpBlock(core, { ip, severity: values.severity, comment: values.comment, expiresIn }, null),
        );
        out(`OK, ${block.ip} ${block.severity}`);
      };
    }
    if (action === 'remove')
      return async (core, out) => {
        const block = await collection(core.db, ipBlocks).findOne({ ip: formatCidr(range) });
        if (!block) throw new CliError(`${ip} is not blocked`);
        await deleteIpBlock(core, block._id, null);
        out('OK');
      };
  }
  if (group === 'reports' && action === 'list') {
    const { values } = commandArgs(rest, { resolved: { type: 'boolean' } });
    return async (core, out) => {
      const list = await collection(core.db, reports)
        .find({ actionTakenAt: values.resolved ? { $ne: null } : null })
        .sort({ _id: -1 })
        .limit(200)
        .toArray();
      const names = new Map(
        (
          await collection(core.db, accounts)
            .find({ _id: { $in: list.flatMap((r) => [r.accountId, r.targetAccountId]) } })
            .toArray()
        ).map((a) => [a._id, a.domain ? `${a.username}@${a.domain}` : a.username]),
      );
      for (const r of list)
        out(
          `#${r._id} ${r.createdAt.toISOString()} ${r.category} ${names.get(r.accountId) ?? r.accountId} -> ${names.get(r.targetAccountId) ?? r.targetAccountId}${r.comment ? `: ${r.comment.replace(/\s+/g, ' ').slice(0, 80)}` : ''}`,
        );
    };
  }
  if (group === 'action-log') {
    const { values } = parseArgs({
      args: [action, ...rest].filter((a) => a !== undefined),
      options: { limit: { type: 'string' } },
    });
    const limit = int(values.limit, '--limit') ?? 50;
    if (limit < 1 || limit > 10_000) throw new CliError('--limit must be between 1 and 10000');
    return async (core, out) => {
      const entries = await collection(core.db, adminActions).find({}).sort({ _id: -1 }).limit(limit).toArray();
      const actors = new Map(
        (
          await collection(core.db, accounts)
            .find({ _id: { $in: entries.map((e) => e.accountId).filter((a): a is bigint => a !== null) } })
            .toArray()
        ).map((a) => [a._id, a.username]),
      );
      for (const e of entries) {
        const who = e.accountId === null ? '(cli)' : (actors.get(e.accountId) ?? String(e.accountId));
        const details = Object.keys(e.details).length ? ` ${JSON.stringify(e.details)}` : '';
        out(`${e.createdAt.toISOString()} ${who} ${e.action} ${e.targetType} ${e.humanIdentifier}${details}`);
      }
    };
  }
  if (group === 'statuses' && action === 'remove') {
    const { values, positionals } = commandArgs(rest, {
      text: { type: 'string' },
      report: { type: 'string' },
      'no-email': { type: 'boolean' },
    });
    if (positionals.length === 0) throw new CliError('statuses remove needs at least one ID');
    const ids = positionals.map((p) => {
      const id = parseId(p);
      if (id === null) throw new CliError(`Invalid status id: ${p}`);
      return id;
    });
    const reportId = values.report === undefined ? null : parseId(values.report);
    if (values.report !== undefined && reportId === null) throw new CliError(`Invalid report id: ${values.report}`);
    return async (core, out) => {
      const strikes = await guarded(() =>
        removeStatusesByModerator(core, ids, null, {
          text: values.text,
          reportId,
          sendEmail: !values['no-email'],
        }),
      );
      const removed = strikes.reduce((n, s) => n + s.statusIds.length, 0);
      if (removed === 0) throw new CliError('No such statuses');
      out(`OK, removed ${removed}`);
    };
  }
  if (group === 'roles') {
    const { values, positionals } = commandArgs(rest, {
      permissions: { type: 'string' },
      position: { type: 'string' },
      color: { type: 'string' },
      highlighted: { type: 'boolean' },
      'require-2fa': { type: 'boolean' },
      'no-require-2fa': { type: 'boolean' },
      as: { type: 'string' },
    });
    if (values['require-2fa'] && values['no-require-2fa'])
      throw new CliError('--require-2fa and --no-require-2fa cannot be used together');
    const require2fa = values['require-2fa'] ? true : values['no-require-2fa'] ? false : undefined;
    const permissions = mask(values.permissions);
    const position = int(values.position, '--position');
    if (action === 'list')
      return async (core, out) => {
        await ensureBuiltInRoles(core);
        for (const r of await collection(core.db, roles).find({}).sort({ position: -1 }).toArray())
          out(`${r.name} (position ${r.position}): ${permissionNames(r.permissions).join(', ') || '-'}`);
      };
    const name = one(positionals, 'NAME');
    if (action === 'create') {
      if (permissions === undefined) throw new CliError('--permissions is required');
      return async (core, out) => {
        const grantor = await grantorOf(core, values.as);
        const role = await guarded(() =>
          createCustomRole(
            core,
            { name, permissions, position, color: values.color, highlighted: values.highlighted },
            grantor,
            null,
          ),
        );
        out(`OK, ${role.name}`);
      };
    }
    if (action === 'update')
      return async (core, out) => {
        const role = await roleNamed(core, name);
        await guarded(async () =>
          updateCustomRole(
            core,
            role,
            { permissions, position, color: values.color, highlighted: values.highlighted, require2fa },
            await grantorOf(core, values.as),
            null,
          ),
        );
        out('OK');
      };
    if (action === 'delete')
      return async (core, out) => {
        const role = await roleNamed(core, name);
        await guarded(async () => deleteCustomRole(core, role, await grantorOf(core, values.as), null));
        out('OK');
      };
  }
  return null;
}
