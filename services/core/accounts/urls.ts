// ActivityPub ids and web addresses of local accounts, in Mastodon's forms, so federation can
// plug in without migrating data: https://DOMAIN/users/NAME and https://DOMAIN/@NAME.
// DOMAIN is where this server answers HTTP: WEB_DOMAIN, which defaults to LOCAL_DOMAIN. Like
// Mastodon, when the two differ the handle stays name@LOCAL_DOMAIN (WebFinger) while ids and
// pages live on WEB_DOMAIN, the only host that can serve them.
import type { Config } from '../config.ts';

export interface LocalActorUrls {
  uri: string;
  url: string;
  inboxUrl: string;
  outboxUrl: string;
  sharedInboxUrl: string;
  followersUrl: string;
  featuredUrl: string;
}

/** Base of local ActivityPub ids and pages (config.baseUrl: scheme and WEB_DOMAIN). */
export function localBase(config: Config): string {
  return config.baseUrl;
}

export function localActorUrls(config: Config, username: string): LocalActorUrls {
  const uri = `${localBase(config)}/users/${username}`;
  return {
    uri,
    url: `${localBase(config)}/@${username}`,
    inboxUrl: `${uri}/inbox`,
    outboxUrl: `${uri}/outbox`,
    sharedInboxUrl: `${localBase(config)}/inbox`,
    followersUrl: `${uri}/followers`,
    featuredUrl: `${uri}/collections/featured`,
  };
}
