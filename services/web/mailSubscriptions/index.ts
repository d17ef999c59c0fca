// Unsubscribing from one kind of notification e-mail through the link of its footer and its
// `List-Unsubscribe` header (Mastodon 4.3's MailSubscriptionsController): GET /unsubscribe shows
// what will be turned off, with a form; POST /unsubscribe turns it off. No session is needed: the
// signed token in the link names the user. The page's form carries a CSRF token like every form;
// a mail client's one-click POST (RFC 8058: body `List-Unsubscribe=One-Click`, token and type in
// the URL) has no session to forge a request from, so the signed token alone authorises it.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import { translator } from '../i18n.ts';
import { formField, queryField } from '../forms.ts';
import { formPage } from '../view.ts';
import { messagePage, notFoundPage } from '../pages.ts';
import { unsubscribe, unsubscribeType, unsubscribingUser } from '../../core/users/unsubscribe.ts';

const t = translator('en');

/** A field of the form, else of the link's query (the one-click POST goes to the link itself). */
const field = (request: FastifyRequest, name: string) =>
  formField(request, name, 400) || queryField(request, name, 400);

const isOneClick = (request: FastifyRequest) => formField(request, 'List-Unsubscribe', 20) === 'One-Click';

const mailSubscriptionPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;
  const notFound = (reply: FastifyReply) => notFoundPage(reply, core);

  app.get('/unsubscribe', async (request, reply) => {
    const token = queryField(request, 'token', 400);
    const type = unsubscribeType(queryField(request, 'type', 40));
    const user = type ? await unsubscribingUser(core, token) : null;
    if (!type || !user) return notFound(reply);
    return formPage(reply, {
      template: 'mailSubscriptions/unsubscribe',
      title: 'mail_subscriptions.unsubscribe.title',
      instance,
      data: { token, type, typeLabel: t(`mail_subscriptions.unsubscribe.emails.${type}`), email: user.email },
    });
  });

  app.post(
    '/unsubscribe',
    {
      preHandler: (request, reply, done) => (isOneClick(request) ? done() : app.csrfProtection(request, reply, done)),
    },
    async (request, reply) => {
      const token = field(request, 'token');
      const type = unsubscribeType(field(request, 'type'));
      const user = type ? await unsubscribe(core, token, type) : null;
      if (!type || !user) return notFound(reply);
      const vars = { type: t(`mail_subscriptions.unsubscribe.emails.${type}`), domain: instance, email: user.email };
      return messagePage(reply, core, {
        title: 'mail_subscriptions.unsubscribe.complete',
        lines: [t('mail_subscriptions.unsubscribe.success', vars), t('mail_subscriptions.unsubscribe.resubscribe')],
        link: { href: '/settings/preferences/notifications', label: 'mail_subscriptions.unsubscribe.settings_link' },
      });
    },
  );
};

export default mailSubscriptionPages;
