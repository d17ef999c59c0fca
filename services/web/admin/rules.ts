// Server rules (manage_rules, Mastodon's /admin/rules): the ordered list shown at sign-up and in
// reports, added and removed through the core rule operations.
import type { FastifyReply } from 'fastify';
import type { AdminArea, Staff } from './kit.ts';
import { addRule, listRules, removeRule, RuleError } from '../../core/instance/rules.ts';
import { validationFailed } from '../../core/errors.ts';

const rulePages: AdminArea = (app, { core, staff, view, attempt, field, idParam }) => {
  async function rulesPage(reply: FastifyReply, me: Staff, error: string | null = null) {
    return view(reply, me, 'rules', 'admin.rules.title', { rules: await listRules(core), error }, error ? 422 : 200);
  }

  app.get('/admin/rules', async (request, reply) => {
    const me = await staff(request, reply, 'manage_rules');
    if (!me) return reply;
    return rulesPage(reply, me);
  });

  app.post('/admin/rules', { preHandler: app.csrfProtection }, async (request, reply) => {
    const me = await staff(request, reply, 'manage_rules');
    if (!me) return reply;
    const priority = Number(field(request, 'priority') || '0');
    const error = await attempt(() =>
      addRule(core, {
        text: field(request, 'text'),
        hint: field(request, 'hint'),
        priority: Number.isInteger(priority) ? priority : 0,
      }).catch((err: unknown) => {
        // The rule module's own error: a validation message for the form.
        throw err instanceof RuleError ? validationFailed(err.message) : err;
      }),
    );
    if (error) return rulesPage(reply, me, error);
    return reply.redirect('/admin/rules', 303);
  });

  app.post<{ Params: { id: string } }>(
    '/admin/rules/:id/delete',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const me = await staff(request, reply, 'manage_rules');
      if (!me) return reply;
      const id = idParam(request);
      if (id === null || !(await removeRule(core, id))) return reply.callNotFound();
      return reply.redirect('/admin/rules', 303);
    },
  );
};

export default rulePages;
