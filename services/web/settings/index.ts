// Settings pages: the public profile (/settings/profile), through the same core operation as PATCH
// /api/v1/accounts/update_credentials; the apps holding tokens of the user
// (/oauth/authorized_applications), with their permissions and last use, and revoking one (all its
// tokens; streaming sockets of those tokens close at the streaming server's next revocation check).
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { UserDoc } from '../../core/model/users.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { updateProfile, ProfileValidationError, FIELDS_MAX } from '../../core/accounts/profile.ts';
import { ProfileImageError } from '../../core/accounts/images.ts';
import { presentAccount } from '../../core/entities/account.ts';
import { formCheckbox, formField } from '../forms.ts';
import { parseId } from '../../core/ids.ts';
import { listAuthorizedApps, revokeAuthorizedApp } from '../../core/oauth/authorizedApps.ts';
import { findAppById } from '../../core/oauth/apps.ts';
import { translator } from '../i18n.ts';
import { page } from '../view.ts';
import { formatDate } from '../format.ts';
import { asSignedIn, signedInForm } from '../guard.ts';

const t = translator('en');

const settingsPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;

  async function appsPage(
    reply: FastifyReply,
    user: UserDoc,
    username: string,
    notice?: string,
  ): Promise<FastifyReply> {
    const apps = await listAuthorizedApps(core, user._id);
    return page(reply, {
      template: 'settings/authorized_apps',
      title: 'authorized_apps.title',
      instance,
      signedInAs: username,
      csrf: reply.generateCsrf(),
      data: {
        notice: notice ?? null,
        apps: apps.map((a) => ({
          id: String(a.app._id),
          name: a.app.name,
          website: a.app.website && /^https?:\/\//i.test(a.app.website) ? a.app.website : null,
          scopes: a.scopes.join(' '),
          authorizedAt: formatDate(a.authorizedAt),
          lastUsedAt: a.lastUsedAt ? formatDate(a.lastUsedAt) : null,
        })),
      },
    });
  }

  // --- profile ------------------------------------------------------------------------------

  const OPTIONS = [
    ['locked', 'locked'],
    ['bot', 'bot'],
    ['discoverable', 'discoverable'],
    ['indexable', 'indexable'],
    ['hide_collections', 'hideCollections'],
    ['noindex', 'noindex'],
  ] as const;

  async function profilePage(
    reply: FastifyReply,
    account: AccountDoc,
    opts: { status?: number; notice?: string; error?: string } = {},
  ): Promise<FastifyReply> {
    const entity = await presentAccount(core, account);
    const fields = Array.from({ length: FIELDS_MAX }, (_, i) => ({
      name: account.fieldsSource[i]?.name ?? '',
      value: account.fieldsSource[i]?.value ?? '',
      verified: Boolean(account.fields[i]?.verifiedAt),
    }));
    return page(reply, {
      status: opts.status,
      template: 'settings/profile',
      title: 'profile.title',
      instance,
      signedInAs: account.username,
      csrf: reply.generateCsrf(),
      data: {
        notice: opts.notice ?? null,
        error: opts.error ?? null,
        // Our own files by path: the page's origin may differ from the configured one (a proxy, a test).
        avatar: entity.avatar_static.startsWith(`${core.config.baseUrl}/`)
          ? entity.avatar_static.slice(core.config.baseUrl.length)
          : entity.avatar_static,
        form: {
          displayName: account.displayName,
          note: account.noteSource,
          avatarDescription: account.avatarDescription ?? '',
          headerDescription: account.headerDescription ?? '',
          fields,
        },
        options: OPTIONS.map(([name, key]) => ({
          name,
          checked: account[key],
          label: t(`profile.${name}`),
          hint: t(`profile.${name}_hint`),
        })),
      },
    });
  }

  signedInForm(app, core, '/settings/profile', {
    show: (request, reply, signedIn) => profilePage(reply, signedIn.account),
    submit: async (request, reply, signedIn) => {
      const { account, user } = signedIn;
      const fields = Array.from({ length: FIELDS_MAX }, (_, i) => ({
        name: formField(request, `field_name_${i}`, 1000),
        value: formField(request, `field_value_${i}`, 1000),
      }));
      // The form always has every checkbox: one not sent is off.
      const options = Object.fromEntries(OPTIONS.map(([name, key]) => [key, formCheckbox(request, name)]));
      try {
        const updated = await updateProfile(core, account, user, {
          displayName: formField(request, 'display_name', 1000),
          note: formField(request, 'note', 5000),
          fields,
          ...options,
          avatar: request.uploads.avatar?.data.length ? request.uploads.avatar.data : undefined,
          header: request.uploads.header?.data.length ? request.uploads.header.data : undefined,
          avatarDescription: formField(request, 'avatar_description', 5000),
          headerDescription: formField(request, 'header_description', 5000),
        });
        return profilePage(reply, updated.account, { notice: t('profile.saved') });
      } catch (err) {
        if (err instanceof ProfileValidationError || err instanceof ProfileImageError)
          return profilePage(reply, account, { status: 422, error: err.message });
        throw err;
      }
    },
  });

  // --- authorized apps ------------------------------------------------------------------------

  app.get(
    '/oauth/authorized_applications',
    asSignedIn(core, '/oauth/authorized_applications', (request, reply, signedIn) =>
      appsPage(reply, signedIn.user, signedIn.account.username),
    ),
  );

  // DELETE in Mastodon; a form without JavaScript posts it with `_method=delete`, as Rails forms do.
  app.post<{ Params: { id: string } }>(
    '/oauth/authorized_applications/:id',
    { preHandler: app.csrfProtection },
    asSignedIn(core, '/oauth/authorized_applications', async (request, reply, signedIn) => {
      const appId = parseId(request.params.id);
      const client = appId === null ? null : await findAppById(core, appId);
      const revoked = client ? await revokeAuthorizedApp(core, signedIn.user._id, client._id) : false;
      return appsPage(
        reply,
        signedIn.user,
        signedIn.account.username,
        revoked && client ? t('authorized_apps.revoked', { name: client.name }) : undefined,
      );
    }),
  );
};

export default settingsPages;
