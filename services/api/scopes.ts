// The OAuth scopes and sign-in requirement (`config.auth`) of the API's routes, as Mastodon's
// controllers declare them (`doorkeeper_authorize!`, with `require_user!` or without): each scope
// set written once; an area imports the ones it needs under its own short names. `*_PUBLIC`: anyone
// may call the route, and a token given must hold the scope.
import type { AuthRequirement } from './plugins/auth.ts';

function signedIn(...scopes: string[]): AuthRequirement {
  return { scopes, user: 'required' };
}

function publicOr(...scopes: string[]): AuthRequirement {
  return { scopes, user: 'optional' };
}

export const READ = signedIn('read');
export const READ_PUBLIC = publicOr('read');
export const PUSH = signedIn('push');

export const READ_ACCOUNTS = signedIn('read', 'read:accounts');
export const READ_ACCOUNTS_PUBLIC = publicOr('read', 'read:accounts');
export const WRITE_ACCOUNTS = signedIn('write', 'write:accounts');
export const READ_BLOCKS = signedIn('read', 'read:blocks', 'follow');
export const WRITE_BLOCKS = signedIn('write', 'write:blocks', 'follow');
export const WRITE_BOOKMARKS = signedIn('write', 'write:bookmarks');
export const READ_COLLECTIONS_PUBLIC = publicOr('read', 'read:collections');
export const WRITE_COLLECTIONS = signedIn('write', 'write:collections');
export const WRITE_CONVERSATIONS = signedIn('write', 'write:conversations');
export const WRITE_FAVOURITES = signedIn('write', 'write:favourites');
export const READ_FILTERS = signedIn('read', 'read:filters');
export const WRITE_FILTERS = signedIn('write', 'write:filters');
export const READ_FOLLOWS = signedIn('read', 'read:follows', 'follow');
export const WRITE_FOLLOWS = signedIn('write', 'write:follows', 'follow');
export const READ_LISTS = signedIn('read', 'read:lists');
export const WRITE_LISTS = signedIn('write', 'write:lists');
export const READ_MUTES = signedIn('read', 'read:mutes', 'follow');
export const WRITE_MUTES = signedIn('write', 'write:mutes', 'follow');
export const READ_NOTIFICATIONS = signedIn('read', 'read:notifications');
export const WRITE_NOTIFICATIONS = signedIn('write', 'write:notifications');
export const READ_STATUSES = signedIn('read', 'read:statuses');
export const READ_STATUSES_PUBLIC = publicOr('read', 'read:statuses');
export const WRITE_STATUSES = signedIn('write', 'write:statuses');
