// Preferences: posting defaults and the languages of the public timelines (/settings/preferences,
// through the same core operation as PATCH /api/v1/accounts/update_credentials), and whose
// notifications are accepted, filtered or ignored (/settings/preferences/notifications, the same
// operation as PATCH /api/v2/notifications/policy).
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { UserDoc, PostingPrivacy } from '../../core/model/users.ts';
import type { Id } from '../../core/ids.ts';
import { updateProfile, ProfileValidationError, DEFAULT_PRIVACY_VALUES } from '../../core/accounts/profile.ts';
import { KNOWN_LANGUAGES, ISO_639_1 } from '../../core/instance/languages.ts';
import { policyOf } from '../../core/notifications/policy.ts';
import { POLICY_FIELDS, presentPolicyV2, updatePolicy } from '../../core/notifications/requests.ts';
import { POLICY_VALUES } from '../../core/model/notificationPolicies.ts';
import { formCheckbox, formField, formList } from '../forms.ts';
import { translator } from '../i18n.ts';
import { formPage, type FormOutcome } from '../view.ts';
import { signedInForm } from '../guard.ts';
import { updateNotificationEmails } from '../../core/users/notificationEmails.ts';
import { emailChoices, submittedEmailChoices } from './notificationEmails.ts';

const t = translator('en');

const preferencesPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;

  function preferencesPage(
    reply: FastifyReply,
    user: UserDoc,
    username: string,
    outcome: FormOutcome = {},
  ): Promise<FastifyReply> {
    const chosen = new Set(user.settings.chosenLanguages ?? []);
    const data = {
      privacies: DEFAULT_PRIVACY_VALUES.map((value) => ({
        value,
        label: t(`preferences.privacy.${value}`),
        selected: value === user.settings.defaultPrivacy,
      })),
      language: user.settings.defaultLanguage ?? '',
      languages: KNOWN_LANGUAGES,
      chosenLanguages: KNOWN_LANGUAGES.map((l) => ({ ...l, checked: chosen.has(l.code) })),
      sensitive: user.settings.defaultSensitive,
    };
    const view = { template: 'settings/preferences', title: 'preferences.title', instance, signedInAs: username, data };
    return formPage(reply, view, outcome);
  }

  signedInForm(app, core, '/settings/preferences', {
    show: (request, reply, signedIn) => preferencesPage(reply, signedIn.user, signedIn.account.username),
    submit: async (request, reply, signedIn) => {
      const { account, user } = signedIn;
      const privacy = formField(request, 'default_privacy', 20);
      const language = formField(request, 'default_language', 10);
      const chosenLanguages = formList(request, 'chosen_languages', 500, 10);
      if (
        !(DEFAULT_PRIVACY_VALUES as readonly string[]).includes(privacy) ||
        (language && !ISO_639_1.has(language)) ||
        chosenLanguages.some((l) => !ISO_639_1.has(l))
      )
        return preferencesPage(reply, user, account.username, { status: 422, error: t('errors.bad_request') });
      try {
        const updated = await updateProfile(core, account, user, {
          privacy: privacy as PostingPrivacy,
          language: language || null,
          sensitive: formCheckbox(request, 'default_sensitive'),
          chosenLanguages,
        });
        return preferencesPage(reply, updated.user, account.username, { notice: t('preferences.saved') });
      } catch (err) {
        if (err instanceof ProfileValidationError)
          return preferencesPage(reply, user, account.username, { status: 422, error: err.message });
        throw err;
      }
    },
  });

  // --- notifications --------------------------------------------------------------------------

  async function notificationsPage(
    reply: FastifyReply,
    accountId: Id,
    username: string,
    user: UserDoc,
    outcome: FormOutcome = {},
  ): Promise<FastifyReply> {
    const policy = presentPolicyV2(await policyOf(core, accountId));
    const data = {
      fields: POLICY_FIELDS.map((name) => ({
        name,
        label: t(`preferences.notifications.${name}`),
        hint: t(`preferences.notifications.${name}_hint`),
        options: POLICY_VALUES.map((value) => ({
          value,
          label: t(`preferences.notifications.values.${value}`),
          selected: policy[name] === value,
        })),
      })),
      emails: await emailChoices(core, user, t),
    };
    const view = { template: 'settings/notifications', title: 'preferences.notifications.title', instance, data };
    return formPage(reply, { ...view, signedInAs: username }, outcome);
  }

  signedInForm(app, core, '/settings/preferences/notifications', {
    show: (request, reply, signedIn) =>
      notificationsPage(reply, signedIn.account._id, signedIn.account.username, signedIn.user),
    submit: async (request, reply, signedIn) => {
      const { account, user } = signedIn;
      const changes = Object.fromEntries(POLICY_FIELDS.map((f) => [f, formField(request, f, 20)]));
      if (Object.values(changes).some((v) => !(POLICY_VALUES as readonly string[]).includes(v)))
        return notificationsPage(reply, account._id, account.username, user, {
          status: 422,
          error: t('errors.bad_request'),
        });
      await updatePolicy(core, account._id, changes);
      const emails = await submittedEmailChoices(core, user, request);
      const updated = await updateNotificationEmails(core, user._id, emails.changes, emails.always);
      return notificationsPage(reply, account._id, account.username, updated ?? user, {
        notice: t('preferences.saved'),
      });
    },
  });
};

export default preferencesPages;
