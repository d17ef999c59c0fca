// Status::Mention and Status::Tag (mastodon-api-entities.md §3.1, §3.2).
import { Type, type Static } from '@sinclair/typebox';
import type { Config } from '../config.ts';
import type { StatusMention, StatusTag } from '../model/statuses.ts';
import { tagUrl } from '../statuses/urls.ts';

export const MentionEntity = Type.Object({
  id: Type.String(),
  username: Type.String(),
  url: Type.String(),
  acct: Type.String(),
});
export type Mention = Static<typeof MentionEntity>;

export const StatusTagEntity = Type.Object({ name: Type.String(), url: Type.String() });
export type StatusTagRef = Static<typeof StatusTagEntity>;

export function presentMention(m: StatusMention): Mention {
  return { id: String(m.accountId), username: m.username, url: m.url, acct: m.acct };
}

export function presentStatusTag(config: Config, t: StatusTag): StatusTagRef {
  return { name: t.name, url: tagUrl(config, t.name) };
}
