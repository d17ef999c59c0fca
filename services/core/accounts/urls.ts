// ActivityPub ids and web addresses of local accounts, in Mastodon's forms, so federation can
// plug in without migrating data: https://LOCAL_DOMAIN/users/NAME and https://LOCAL_DOMAIN/@NAME.
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

/** Base of ActivityPub ids: LOCAL_DOMAIN (the handle domain), with the web scheme. */
export function localBase(config: Config): string {
  return `${config.localHttps ? 'https' : 'http'}://${config.localDomain}`;
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
