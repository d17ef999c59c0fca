// The account pages of Devise's routes in Mastodon, one plugin each: log-in and log-out, sign-up
// with the e-mail confirmation, password reset, and the account page (password, e-mail, sessions).
// Every form carries a CSRF token; the work is done by core operations shared with the API.
import type { FastifyPluginAsync } from 'fastify';
import type { WebOptions } from '../index.ts';
import signInPages from './signIn.ts';
import signUpPages from './signUp.ts';
import passwordPages from './password.ts';
import accountEditPages from './edit.ts';

const authPages: FastifyPluginAsync<WebOptions> = async (app, opts) => {
  await app.register(signInPages, opts);
  await app.register(signUpPages, opts);
  await app.register(passwordPages, opts);
  await app.register(accountEditPages, opts);
};

export default authPages;
