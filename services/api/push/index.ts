// Web Push subscription of the calling access token (scope `push`): POST creates (replacing the
// token's previous one), GET shows, PUT changes alerts and policy, DELETE removes. Delivery is the
// `webpush` pipeline's job.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import {
  presentSubscription,
  subscribe,
  subscriptionOfToken,
  unsubscribeToken,
  updateSubscription,
  type PushDataInput,
} from '../../core/push/subscriptions.ts';
import { requireUser } from '../plugins/auth.ts';
import { ApiError, notFound } from '../errors.ts';
import { PUSH } from '../scopes.ts';

const Loose = Type.Object({}, { additionalProperties: true });
const Body = Type.Optional(
  Type.Object(
    {
      subscription: Type.Optional(Type.Unknown()),
      data: Type.Optional(Type.Unknown()),
      policy: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: true },
  ),
);
const SubscriptionEntity = Type.Object({
  id: Type.String(),
  endpoint: Type.String(),
  standard: Type.Boolean(),
  alerts: Type.Record(Type.String(), Type.Boolean()),
  policy: Type.String(),
  server_key: Type.String(),
});

function objectOrEmpty(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** `data[alerts]`, `data[policy]`; a top-level `policy` is accepted too, as Mastodon's clients send both. */
function dataOf(body: Record<string, unknown>): PushDataInput {
  const data = objectOrEmpty(body.data);
  return { alerts: objectOrEmpty(data.alerts), policy: data.policy ?? body.policy };
}

const pushArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app, { core }) => {
  app.post(
    '/api/v1/push/subscription',
    { schema: { body: Body, response: { 200: SubscriptionEntity } }, config: { auth: PUSH } },
    async (request) => {
      const { token, user, account } = requireUser(request);
      const body = objectOrEmpty(request.body);
      if (body.subscription === undefined)
        throw new ApiError(400, 'param is missing or the value is empty: subscription');
      const sub = objectOrEmpty(body.subscription);
      const keys = objectOrEmpty(sub.keys);
      const created = await subscribe(
        core,
        { tokenId: token._id, userId: user._id, accountId: account._id },
        { endpoint: sub.endpoint, p256dh: keys.p256dh, auth: keys.auth, standard: sub.standard, data: dataOf(body) },
      );
      return presentSubscription(core, created);
    },
  );

  app.get(
    '/api/v1/push/subscription',
    { schema: { response: { 200: SubscriptionEntity } }, config: { auth: PUSH } },
    async (request) => {
      const { token } = requireUser(request);
      const sub = await subscriptionOfToken(core, token._id);
      if (!sub) throw notFound();
      return presentSubscription(core, sub);
    },
  );

  app.put(
    '/api/v1/push/subscription',
    { schema: { body: Body, response: { 200: SubscriptionEntity } }, config: { auth: PUSH } },
    async (request) => {
      const { token } = requireUser(request);
      const sub = await subscriptionOfToken(core, token._id);
      if (!sub) throw notFound();
      return presentSubscription(core, await updateSubscription(core, sub, dataOf(objectOrEmpty(request.body))));
    },
  );

  app.delete(
    '/api/v1/push/subscription',
    { schema: { response: { 200: Loose } }, config: { auth: PUSH } },
    async (request) => {
      const { token } = requireUser(request);
      await unsubscribeToken(core, token._id);
      return {};
    },
  );
};

export default pushArea;
