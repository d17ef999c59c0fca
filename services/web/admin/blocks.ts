// Sign-up blocks (manage_blocks, as the admin API's routes): e-mail domain blocks (refuse, or
// send to the approval queue) and IP rules (sign-ups need approval, sign-ups blocked, no access),
// each created and removed through the same core operations as the API.
import { listResource, type AdminArea } from './kit.ts';
import { listedEmailDomainBlocks, listedIpBlocks } from '../../core/moderation/adminLists.ts';
import { createEmailDomainBlock, deleteEmailDomainBlock } from '../../core/moderation/emailBlocks.ts';
import { createIpBlock, deleteIpBlock } from '../../core/moderation/ipBlocks.ts';
import { formCheckbox } from '../forms.ts';

const LISTED = 500;
/** The expiry choices of Mastodon's IP rule form, in seconds (0: never). */
const EXPIRIES = [0, 86_400, 1_209_600, 2_419_200, 15_778_476, 31_556_952];

const blockPages: AdminArea = (app, kit) => {
  const { core, field } = kit;

  listResource(app, kit, 'manage_blocks', {
    paths: { list: '/admin/email_domain_blocks', remove: '/admin/email_domain_blocks/:id/delete' },
    template: 'email_domain_blocks',
    load: async () => ({
      // The MX variants recorded with a block are not listed on their own (parentId set).
      blocks: await listedEmailDomainBlocks(core, LISTED),
    }),
    create: (request, me) =>
      createEmailDomainBlock(
        core,
        { domain: field(request, 'domain'), allowWithApproval: formCheckbox(request, 'allow_with_approval') },
        me.account._id,
      ),
    remove: (id, me) => deleteEmailDomainBlock(core, id, me.account._id),
  });

  listResource(app, kit, 'manage_blocks', {
    paths: { list: '/admin/ip_blocks', remove: '/admin/ip_blocks/:id/delete' },
    template: 'ip_blocks',
    load: async () => ({
      blocks: await listedIpBlocks(core, LISTED),
      expiries: EXPIRIES,
    }),
    create: (request, me) => {
      const expires = Number(field(request, 'expires_in'));
      return createIpBlock(
        core,
        {
          ip: field(request, 'ip'),
          severity: field(request, 'severity'),
          comment: field(request, 'comment'),
          expiresIn: EXPIRIES.includes(expires) ? expires : 0,
        },
        me.account._id,
      );
    },
    remove: (id, me) => deleteIpBlock(core, id, me.account._id),
  });
};

export default blockPages;
