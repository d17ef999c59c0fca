// GET /api/v1/preferences: the posting defaults of the user's settings (what update_credentials
// `source[...]` sets) and the reading preferences, with Mastodon's colon keys.
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AreaOptions } from '../areas.ts';
import { requireUser } from '../plugins/auth.ts';

const Preferences = Type.Object({
  'posting:default:visibility': Type.String(),
  'posting:default:sensitive': Type.Boolean(),
  'posting:default:language': Type.Union([Type.String(), Type.Null()]),
  'posting:default:quote_policy': Type.String(),
  'reading:expand:media': Type.String(),
  'reading:expand:spoilers': Type.Boolean(),
  'reading:autoplay:gifs': Type.Boolean(),
});

const preferencesArea: FastifyPluginAsyncTypebox<AreaOptions> = async (app) => {
  app.get(
    '/api/v1/preferences',
    {
      schema: { response: { 200: Preferences } },
      config: { auth: { scopes: ['read', 'read:accounts'], user: 'required' } },
    },
    async (request) => {
      const { user } = requireUser(request);
      return {
        'posting:default:visibility': user.settings.defaultPrivacy,
        'posting:default:sensitive': user.settings.defaultSensitive,
        'posting:default:language': user.settings.defaultLanguage,
        'posting:default:quote_policy': user.settings.defaultQuotePolicy ?? 'public',
        'reading:expand:media': 'default',
        'reading:expand:spoilers': false,
        'reading:autoplay:gifs': false,
      };
    },
  );
};

export default preferencesArea;
