// E-mail confirmation: re-sending the mail (POST /api/v1/emails/confirmations) and the unofficial
// check (GET /api/v1/emails/check_confirmation). The link the mail carries (GET /auth/confirmation)
// is a page: services/web/auth.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { userIdByEmail } from '../../core/accounts/create.ts';
import { resendConfirmation } from '../../core/users/confirmation.ts';
import { isValidEmail, taken, invalid } from '../../core/accounts/validation.ts';
import { requireUser } from '../plugins/auth.ts';
import { forbidden, validationFailed } from '../errors.ts';
import { enforceRateLimit, RATE_LIMITS } from '../rateLimit.ts';

const emailsArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  const auth = { scopes: ['write', 'write:accounts'], user: 'required' as const, allowUnconfirmed: true };

  app.post(
    '/api/v1/emails/confirmations',
    {
      schema: {
        body: Type.Object({ email: Type.Optional(Type.String({ maxLength: 1000 })) }, { additionalProperties: true }),
        response: { 200: Type.Object({}) },
      },
      config: { auth },
    },
    async (request, reply) => {
      const { user, account, app: client } = requireUser(request);
      if (user.createdByAppId === null || user.createdByAppId !== client._id) {
        throw forbidden('This method is only available to the application the user originally signed-up with');
      }
      if (user.confirmedAt) throw forbidden('This method is only available while the e-mail is awaiting confirmation');
      await enforceRateLimit(core, reply, RATE_LIMITS.emailConfirmationPerUser, String(user._id));
      await enforceRateLimit(core, reply, RATE_LIMITS.emailConfirmationPerIp, request.ip);
      const email = request.body.email?.trim() || undefined;
      if (email !== undefined) {
        if (!isValidEmail(email)) throw validationFailed(`Email ${invalid().description}`, { email: [invalid()] });
        const owner = await userIdByEmail(core, email);
        if (owner !== null && owner !== user._id)
          throw validationFailed(`Email ${taken().description}`, { email: [taken()] });
      }
      await resendConfirmation(core, user, account, email);
      return {};
    },
  );

  app.get(
    '/api/v1/emails/check_confirmation',
    { schema: { response: { 200: Type.Boolean() } }, config: { auth: { ...auth, scopes: ['read', 'read:accounts'] } } },
    async (request) => {
      const { user, app: client } = requireUser(request);
      if (user.createdByAppId !== client._id)
        throw forbidden('This method is only available to the application the user originally signed-up with');
      return user.confirmedAt !== null;
    },
  );
};

export default emailsArea;
