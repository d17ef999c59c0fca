// The relationship pages: follows and followers with "unfollow" and "remove from followers"
// (Mastodon's /relationships), blocked and muted accounts, blocked domains and followed hashtags
// (the screens Mastodon's web app has at /blocks, /mutes, /domain_blocks, /followed_tags), each a
// list a page at a time with its batch action. The work is done by the same core operations as the API.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebOptions } from '../index.ts';
import type { AccountDoc } from '../../core/model/accounts.ts';
import { parseId } from '../../core/ids.ts';
import { ApiError } from '../../core/errors.ts';
import { relatedAccounts, blockedDomains, followedTags, type AccountRelation } from '../../core/graph/ownRelations.ts';
import { applyAccountBatch, type AccountBatchAction } from '../../core/graph/accountBatch.ts';
import { blockDomain, unblockDomain } from '../../core/graph/domainBlocks.ts';
import { unfollowTagById } from '../../core/tags/tagFollows.ts';
import { translator } from '../i18n.ts';
import { formPage, type FormOutcome } from '../view.ts';
import { formatDate } from '../format.ts';
import { formField, formList, queryField } from '../forms.ts';
import { asSignedIn, signedInForm, requireSignedIn } from '../guard.ts';

const t = translator('en');

/** The tabs every relationship page shows, in Mastodon's order. */
const TABS = [
  ['/relationships?relationship=following', 'following'],
  ['/relationships?relationship=followed_by', 'followed_by'],
  ['/blocks', 'blocks'],
  ['/mutes', 'mutes'],
  ['/domain_blocks', 'domain_blocks'],
  ['/followed_tags', 'followed_tags'],
] as const;
type Tab = (typeof TABS)[number][1];

/** Each account list: its path, and the one action its checked accounts get. */
const ACCOUNT_LISTS: Record<AccountRelation, { path: string; action: AccountBatchAction }> = {
  following: { path: '/relationships?relationship=following', action: 'unfollow' },
  followed_by: { path: '/relationships?relationship=followed_by', action: 'remove_from_followers' },
  blocks: { path: '/blocks', action: 'unblock' },
  mutes: { path: '/mutes', action: 'unmute' },
};

type PageState = FormOutcome;

const acctOf = (a: AccountDoc): string => (a.domain ? `${a.username}@${a.domain}` : a.username);

const relationshipPages: FastifyPluginAsync<WebOptions> = async (app, { core }) => {
  const instance = core.config.localDomain;
  const form = { preHandler: app.csrfProtection };

  function tabs(current: Tab) {
    return TABS.map(([href, name]) => ({ href, label: t(`relationships.tabs.${name}`), current: name === current }));
  }

  const olderLink = (path: string, maxId: bigint | null): string | null =>
    maxId === null ? null : `${path}${path.includes('?') ? '&' : '?'}max_id=${maxId}`;

  /** One tab's page: its list (`data`) under the tabs, with the outcome of the last action. */
  function tabPage(
    reply: FastifyReply,
    owner: AccountDoc,
    tab: Tab,
    template: string,
    opts: PageState,
    data: Record<string, unknown>,
  ): Promise<FastifyReply> {
    return formPage(
      reply,
      {
        template,
        title: `relationships.tabs.${tab}`,
        instance,
        signedInAs: owner.username,
        data: { tabs: tabs(tab), ...data },
      },
      opts,
    );
  }

  async function accountsPage(
    request: FastifyRequest,
    reply: FastifyReply,
    owner: AccountDoc,
    relation: AccountRelation,
    opts: PageState = {},
  ): Promise<FastifyReply> {
    const list = await relatedAccounts(core, owner._id, relation, parseId(queryField(request, 'max_id', 30)));
    const { path, action } = ACCOUNT_LISTS[relation];
    return tabPage(reply, owner, relation, 'relationships/accounts', opts, {
      action: path,
      relation,
      button: { name: action, label: t(`relationships.actions.${action}`) },
      empty: t(`relationships.empty.${relation}`),
      accounts: list.items.map(({ account, since, expiresAt }) => ({
        id: String(account._id),
        name: account.displayName || account.username,
        acct: acctOf(account),
        // A remote actor's url is hostile input: only web links are linked.
        url: /^https?:\/\//i.test(account.url) ? account.url : null,
        since: formatDate(since),
        expires: expiresAt ? formatDate(expiresAt) : null,
      })),
      older: olderLink(path, list.nextMaxId),
    });
  }

  const relationOf = (request: FastifyRequest): 'following' | 'followed_by' =>
    queryField(request, 'relationship', 20) === 'followed_by' ? 'followed_by' : 'following';

  app.get('/relationships', async (request, reply) => {
    const relation = relationOf(request);
    const user = await requireSignedIn(core, request, reply, ACCOUNT_LISTS[relation].path);
    if (!user) return reply;
    return accountsPage(request, reply, user.account, relation);
  });

  app.get(
    '/blocks',
    asSignedIn(core, '/blocks', (request, reply, user) => accountsPage(request, reply, user.account, 'blocks')),
  );
  app.get(
    '/mutes',
    asSignedIn(core, '/mutes', (request, reply, user) => accountsPage(request, reply, user.account, 'mutes')),
  );

  // The batch form of each account list (Mastodon's PATCH /relationships with form_account_batch).
  async function batch(request: FastifyRequest, reply: FastifyReply, relation: AccountRelation) {
    const user = await requireSignedIn(core, request, reply, ACCOUNT_LISTS[relation].path);
    if (!user) return reply;
    const ids = formList(request, 'account_ids', 200, 30)
      .map(parseId)
      .filter((id) => id !== null);
    if (ids.length === 0)
      return accountsPage(request, reply, user.account, relation, {
        status: 422,
        error: t('relationships.none_selected'),
      });
    await applyAccountBatch(core, user.account, ACCOUNT_LISTS[relation].action, ids);
    return accountsPage(request, reply, user.account, relation, { notice: t('relationships.done') });
  }

  app.post('/relationships', form, async (request, reply) =>
    batch(request, reply, formField(request, 'relationship', 20) === 'followed_by' ? 'followed_by' : 'following'),
  );
  app.post('/blocks', form, async (request, reply) => batch(request, reply, 'blocks'));
  app.post('/mutes', form, async (request, reply) => batch(request, reply, 'mutes'));

  // --- blocked domains ------------------------------------------------------------------------

  async function domainsPage(request: FastifyRequest, reply: FastifyReply, owner: AccountDoc, opts: PageState = {}) {
    const list = await blockedDomains(core, owner._id, parseId(queryField(request, 'max_id', 30)));
    return tabPage(reply, owner, 'domain_blocks', 'relationships/domain_blocks', opts, {
      domains: list.items.map((d) => ({ domain: d.domain, since: formatDate(d.since) })),
      older: olderLink('/domain_blocks', list.nextMaxId),
    });
  }

  signedInForm(app, core, '/domain_blocks', {
    show: (request, reply, user) => domainsPage(request, reply, user.account),
    submit: async (request, reply, user) => {
      const domain = formField(request, 'domain', 300).trim();
      const unblock = formField(request, 'action', 20) === 'unblock';
      try {
        await (unblock ? unblockDomain : blockDomain)(core, user.account, domain);
      } catch (err) {
        if (err instanceof ApiError && err.statusCode < 500)
          return domainsPage(request, reply, user.account, { status: err.statusCode, error: err.message });
        throw err;
      }
      return domainsPage(request, reply, user.account, {
        notice: t(unblock ? 'relationships.domain_unblocked' : 'relationships.domain_blocked', { domain }),
      });
    },
  });

  // --- followed hashtags ----------------------------------------------------------------------

  async function tagsPage(request: FastifyRequest, reply: FastifyReply, owner: AccountDoc, opts: PageState = {}) {
    const list = await followedTags(core, owner._id, parseId(queryField(request, 'max_id', 30)));
    return tabPage(reply, owner, 'followed_tags', 'relationships/followed_tags', opts, {
      tags: list.items.map((tag) => ({
        id: String(tag._id),
        name: tag.name,
        href: `/tags/${encodeURIComponent(tag.name)}`,
      })),
      older: olderLink('/followed_tags', list.nextMaxId),
    });
  }

  signedInForm(app, core, '/followed_tags', {
    show: (request, reply, user) => tagsPage(request, reply, user.account),
    submit: async (request, reply, user) => {
      const tag = await unfollowTagById(core, user.account, parseId(formField(request, 'tag_id', 30)));
      if (!tag) return tagsPage(request, reply, user.account, { status: 404, error: t('errors.not_found') });
      return tagsPage(request, reply, user.account, { notice: t('relationships.tag_unfollowed', { name: tag.name }) });
    },
  });
};

export default relationshipPages;
