// Featured hashtags (Mastodon's /settings/featured_tags): the hashtags shown on one's profile with
// how often one used them, the most used ones not featured yet as suggestions, adding one by name
// and removing one. The same core operations as /api/v1/featured_tags.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { parseId } from '../../core/ids.ts';
import { ApiError } from '../../core/errors.ts';
import {
  FEATURED_TAGS_LIMIT,
  featureTag,
  featuredTagSuggestions,
  featuredTagUsage,
  ownFeaturedTags,
  unfeatureTag,
} from '../../core/tags/featuredTags.ts';
import { translator } from '../i18n.ts';
import { page } from '../view.ts';
import { formatDate } from '../format.ts';
import { formField } from '../forms.ts';
import { asSignedIn, signedInForm } from '../guard.ts';

const t = translator('en');

const featuredTagPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  async function featuredPage(
    reply: FastifyReply,
    account: AccountDoc,
    opts: { status?: number; notice?: string; error?: string; name?: string } = {},
  ): Promise<FastifyReply> {
    const [featured, suggestions] = await Promise.all([
      ownFeaturedTags(core, account._id),
      featuredTagSuggestions(core, account),
    ]);
    const tags = await Promise.all(
      featured.map(async (f) => {
        const usage = await featuredTagUsage(core, account._id, f.nameNormalized);
        return {
          id: String(f._id),
          name: f.name,
          count: usage.statusesCount,
          last: usage.lastStatusAt ? formatDate(usage.lastStatusAt) : null,
        };
      }),
    );
    return page(reply, {
      status: opts.status,
      template: 'settings/featured_tags',
      title: 'featured_tags.title',
      instance: core.config.localDomain,
      signedInAs: account.username,
      csrf: reply.generateCsrf(),
      data: {
        notice: opts.notice ?? null,
        error: opts.error ?? null,
        name: opts.name ?? '',
        tags,
        suggestions,
        full: tags.length >= FEATURED_TAGS_LIMIT,
        limit: FEATURED_TAGS_LIMIT,
      },
    });
  }

  signedInForm(app, core, '/settings/featured_tags', {
    show: (request, reply, signedIn) => featuredPage(reply, signedIn.account),
    submit: async (request, reply, signedIn) => {
      const name = formField(request, 'name', 300);
      try {
        const tag = await featureTag(core, signedIn.account, name);
        return featuredPage(reply, signedIn.account, { notice: t('featured_tags.added', { name: tag.name }) });
      } catch (err) {
        if (err instanceof ApiError && err.statusCode < 500)
          return featuredPage(reply, signedIn.account, { status: err.statusCode, error: err.message, name });
        throw err;
      }
    },
  });

  // DELETE in Mastodon; a form without JavaScript posts it, as Rails forms do with `_method=delete`.
  app.post<{ Params: { id: string } }>(
    '/settings/featured_tags/:id',
    { preHandler: app.csrfProtection },
    asSignedIn(core, '/settings/featured_tags', async (request, reply, signedIn) => {
      try {
        await unfeatureTag(core, signedIn.account, parseId(request.params.id));
      } catch (err) {
        if (err instanceof ApiError && err.statusCode < 500)
          return featuredPage(reply, signedIn.account, { status: err.statusCode, error: t('errors.not_found') });
        throw err;
      }
      return featuredPage(reply, signedIn.account, { notice: t('featured_tags.removed') });
    }),
  );
};

export default featuredTagPages;
