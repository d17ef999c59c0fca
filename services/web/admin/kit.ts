// What every /admin page shares: the staff guard (signed in, and the role permission the page's
// admin API route names), rendering inside the dashboard's navigation, and turning a refusal of a
// core operation (4xx) into the page's error message.
import { validationFailed } from '../../core/errors.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { Core } from '../../core/context.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import type { UserDoc } from '../../core/model/users.ts';
import type { EffectiveRole } from '../../core/roles/roles.ts';
import { hasPermission, type Permission } from '../../core/roles/permissions.ts';
import { roleOfUser } from '../../core/roles/roles.ts';
import type { Status } from '../../core/entities/status.ts';
import { parseId, type Id } from '../../core/ids.ts';
import { ApiError } from '../../core/errors.ts';
import { requireSignedIn } from '../guard.ts';
import { messagePage } from '../pages.ts';
import { page } from '../view.ts';
import { formField } from '../forms.ts';
import { formatDate } from '../format.ts';
import { statusView } from '../public/present.ts';

export interface Staff {
  user: UserDoc;
  account: AccountDoc;
  role: EffectiveRole;
  permissions: number;
}

/** The sections of the dashboard (Mastodon's admin paths), each behind its API route's permission. */
export const SECTIONS: { path: string; label: string; permission: Permission }[] = [
  { path: '/admin/reports', label: 'admin.nav.reports', permission: 'manage_reports' },
  { path: '/admin/accounts', label: 'admin.nav.accounts', permission: 'manage_users' },
  { path: '/admin/instances', label: 'admin.nav.instances', permission: 'manage_federation' },
  { path: '/admin/domain_blocks', label: 'admin.nav.domain_blocks', permission: 'manage_federation' },
  { path: '/admin/domain_allows', label: 'admin.nav.domain_allows', permission: 'manage_federation' },
  { path: '/admin/email_domain_blocks', label: 'admin.nav.email_domain_blocks', permission: 'manage_blocks' },
  { path: '/admin/ip_blocks', label: 'admin.nav.ip_blocks', permission: 'manage_blocks' },
  { path: '/admin/settings/registrations', label: 'admin.nav.settings', permission: 'manage_settings' },
  { path: '/admin/rules', label: 'admin.nav.rules', permission: 'manage_rules' },
  { path: '/admin/custom_emojis', label: 'admin.nav.custom_emojis', permission: 'manage_custom_emojis' },
  { path: '/admin/announcements', label: 'admin.nav.announcements', permission: 'manage_announcements' },
  { path: '/admin/trends/tags', label: 'admin.nav.trends', permission: 'manage_taxonomies' },
  { path: '/admin/roles', label: 'admin.nav.roles', permission: 'manage_roles' },
  { path: '/admin/action_logs', label: 'admin.nav.action_logs', permission: 'view_audit_log' },
];

export interface AdminKit {
  core: Core;
  /** The signed-in staff member holding `permission`; otherwise the log-in redirect or a 403 page. */
  staff(request: FastifyRequest, reply: FastifyReply, permission: Permission): Promise<Staff | null>;
  /** A page's handler behind the staff guard: `run` is only called for a staff member holding `permission`. */
  asStaff<G extends RouteGenericInterface = RouteGenericInterface>(
    permission: Permission,
    run: (request: FastifyRequest<G>, reply: FastifyReply, me: Staff) => Promise<unknown>,
  ): (request: FastifyRequest<G>, reply: FastifyReply) => Promise<unknown>;
  view(
    reply: FastifyReply,
    me: Staff,
    template: string,
    title: string,
    data: Record<string, unknown>,
    status?: number,
  ): Promise<FastifyReply>;
  /** Runs a core operation; a refusal (4xx) becomes its message, anything else propagates. */
  attempt(run: () => Promise<unknown>): Promise<string | null>;
  field(request: FastifyRequest, name: string, max?: number): string;
  /** A route's `:id` as an id, or null (the route answers 404). */
  idParam(request: FastifyRequest): Id | null;
}

export function adminKit(core: Core): AdminKit {
  const kit: AdminKit = {
    core,
    asStaff: (permission, run) => async (request, reply) => {
      const me = await kit.staff(request, reply, permission);
      return me ? run(request, reply, me) : reply;
    },
    async staff(request, reply, permission) {
      const signedIn = await requireSignedIn(core, request, reply, request.url.split('?')[0]);
      if (!signedIn) return null;
      const role = await roleOfUser(core, signedIn.user);
      if (!hasPermission(role.permissions, permission)) {
        await messagePage(reply, core, {
          status: 403,
          title: 'errors.title',
          lines: ['admin.forbidden'],
          translate: true,
          signedInAs: signedIn.account.username,
          csrf: reply.generateCsrf(),
        });
        return null;
      }
      return { ...signedIn, role, permissions: role.permissions };
    },
    view(reply, me, template, title, data, status = 200) {
      return page(reply, {
        status,
        template: `admin/${template}`,
        title,
        instance: core.config.localDomain,
        signedInAs: me.account.username,
        csrf: reply.generateCsrf(),
        data: {
          ...data,
          wide: true,
          sections: SECTIONS.filter((s) => hasPermission(me.permissions, s.permission)),
          formatDate: (at: string | Date) => formatDate(new Date(at)),
          statusView: (s: Status) => statusView(s),
        },
      });
    },
    async attempt(run) {
      try {
        await run();
        return null;
      } catch (err) {
        if (err instanceof ApiError && err.statusCode < 500) return err.message;
        throw err;
      }
    },
    field: (request, name, max) => formField(request, name, max),
    idParam: (request) => parseId((request.params as { id?: string }).id),
  };
  return kit;
}

/** Registers one area of the dashboard's routes. */
/**
 * Runs a core operation whose module has its own error class (emoji, site upload, archive
 * errors): those become a validation error, shown on the form; anything else is a failure.
 */
export async function asValidation<T>(run: Promise<T>, ...kinds: Array<new (...args: never[]) => Error>): Promise<T> {
  try {
    return await run;
  } catch (err) {
    throw kinds.some((k) => err instanceof k) ? validationFailed((err as Error).message) : err;
  }
}

export type AdminArea = (app: FastifyInstance, kit: AdminKit) => void;

/**
 * A list page with a form to add an entry, and per entry a button to remove it (blocks, allows,
 * rules, roles) or to run one of its actions (announcements, custom emojis).
 */
export interface ListResource<T = Id> {
  /**
   * The list's path (GET shows it, POST adds), the removal's (`.../:id/delete`) and the actions'
   * (`.../:id/:action`), written out.
   */
  paths: { list: string; remove?: string; action?: string };
  /** The page's template; its title is the message `admin.<template>.title`. */
  template: string;
  /** What the page shows besides the error (`request`: the one being answered, e.g. for filters in its query). */
  load(request: FastifyRequest): Promise<Record<string, unknown>>;
  create(request: FastifyRequest, me: Staff): Promise<unknown>;
  remove?(id: Id, me: Staff): Promise<unknown>;
  /** The entry an id names for its actions (null: 404), and the actions by name. */
  find?(id: Id): Promise<T | null>;
  actions?: Record<string, (entry: T, request: FastifyRequest) => Promise<unknown>>;
}

/** Something done to one entry; the entry's id is taken from the path. */
type EntryRun<E> = (entry: E, request: FastifyRequest, me: Staff) => Promise<unknown>;

/** The list page of a resource: with the last form's error (422) and data an area's own route adds. */
export type ListPage = (
  reply: FastifyReply,
  me: Staff,
  error?: string | null,
  extra?: Record<string, unknown>,
) => Promise<FastifyReply>;

/**
 * Registers a list resource's routes; a refused addition, removal or action shows the list with
 * the core's message (422), an unknown entry or action is 404. Returns the list page, for an
 * area's other routes.
 */
export function listResource<T = Id>(
  app: FastifyInstance,
  kit: AdminKit,
  permission: Permission,
  r: ListResource<T>,
): ListPage {
  const title = `admin.${r.template}.title`;
  const listPage: ListPage = async (reply, me, error = null, extra = {}) =>
    kit.view(reply, me, r.template, title, { ...(await r.load(reply.request)), ...extra, error }, error ? 422 : 200);

  app.get(
    r.paths.list,
    kit.asStaff(permission, (_request, reply, me) => listPage(reply, me)),
  );

  app.post(
    r.paths.list,
    { preHandler: app.csrfProtection },
    kit.asStaff(permission, async (request, reply, me) => {
      const error = await kit.attempt(() => r.create(request, me));
      if (error) return listPage(reply, me, error);
      return reply.redirect(r.paths.list, 303);
    }),
  );

  const onEntry = <E>(
    path: string,
    find: (id: Id) => Promise<E | null>,
    pick: (action: string | undefined) => EntryRun<E> | undefined,
  ) =>
    app.post<{ Params: { id: string; action?: string } }>(
      path,
      { preHandler: app.csrfProtection },
      kit.asStaff<{ Params: { id: string; action?: string } }>(permission, async (request, reply, me) => {
        const id = kit.idParam(request);
        const run = pick(request.params.action);
        const entry = id === null || !run ? null : await find(id);
        if (entry === null || !run) return reply.callNotFound();
        const error = await kit.attempt(() => run(entry, request, me));
        if (error) return listPage(reply, me, error);
        return reply.redirect(r.paths.list, 303);
      }),
    );

  const { remove, find, actions } = r;
  if (r.paths.remove && remove)
    onEntry(
      r.paths.remove,
      async (id) => id,
      () => (id, _request, me) => remove(id, me),
    );
  if (r.paths.action && find && actions)
    onEntry(r.paths.action, find, (action) =>
      action !== undefined && Object.hasOwn(actions, action) ? actions[action] : undefined,
    );

  return listPage;
}
