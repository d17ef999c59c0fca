// Server rules (manage_rules, Mastodon's /admin/rules): the ordered list shown at sign-up and in
// reports, added and removed through the core rule operations.
import { listResource, type AdminArea } from './kit.ts';
import { addRule, listRules, removeRule, RuleError } from '../../core/instance/rules.ts';
import { notFound, validationFailed } from '../../core/errors.ts';

const rulePages: AdminArea = (app, kit) => {
  const { core, field } = kit;
  listResource(app, kit, 'manage_rules', {
    paths: { list: '/admin/rules', remove: '/admin/rules/:id/delete' },
    template: 'rules',
    load: async () => ({ rules: await listRules(core) }),
    create: async (request) => {
      const priority = Number(field(request, 'priority') || '0');
      try {
        return await addRule(core, {
          text: field(request, 'text'),
          hint: field(request, 'hint'),
          priority: Number.isInteger(priority) ? priority : 0,
        });
      } catch (err) {
        // The rule module's own error: a validation message for the form.
        throw err instanceof RuleError ? validationFailed(err.message) : err;
      }
    },
    remove: async (id) => {
      if (!(await removeRule(core, id))) throw notFound();
    },
  });
};

export default rulePages;
