// ActivityPub ids and permalinks of local statuses in Mastodon's forms.
import type { Config } from '../config.ts';
import type { Id } from '../ids.ts';
import { localBase } from '../accounts/urls.ts';

export function localStatusUri(config: Config, username: string, id: Id): string {
  return `${localBase(config)}/users/${username}/statuses/${id}`;
}

export function localStatusUrl(config: Config, username: string, id: Id): string {
  return `${localBase(config)}/@${username}/${id}`;
}

export function localReblogUri(config: Config, username: string, id: Id): string {
  return `${localBase(config)}/users/${username}/statuses/${id}/activity`;
}

export function tagUrl(config: Config, name: string): string {
  return `${localBase(config)}/tags/${encodeURIComponent(name)}`;
}
