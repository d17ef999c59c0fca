// One Fastify plugin per API area. Add an area by writing `services/api/<area>/index.ts` that
// exports (default) a `FastifyPluginAsyncTypebox<AreaOptions>` and adding it to AREAS below.
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Core } from '../core/context.ts';
import healthArea from './health/index.ts';
import instanceArea from './instance/index.ts';
import mediaArea from './media/index.ts';
import filesArea from './files/index.ts';
import pollsArea from './polls/index.ts';
import scheduledStatusesArea from './scheduled_statuses/index.ts';
import statusesArea from './statuses/index.ts';
import favouritesArea from './favourites/index.ts';
import bookmarksArea from './bookmarks/index.ts';
import appsArea from './apps/index.ts';
import oauthArea from './oauth/index.ts';
import accountsArea from './accounts/index.ts';
import profileArea from './profile/index.ts';
import emailsArea from './emails/index.ts';
import streamingRedirectArea from './streaming/index.ts';
import followsArea from './follows/index.ts';
import relationshipsArea from './relationships/index.ts';
import blocksArea from './blocks/index.ts';
import mutesArea from './mutes/index.ts';
import domainBlocksArea from './domain_blocks/index.ts';
import accountStatusesArea from './account_statuses/index.ts';
import listsArea from './lists/index.ts';
import collectionsArea from './collections/index.ts';
import annualReportsArea from './annual_reports/index.ts';
import tagsArea from './tags/index.ts';
import featuredTagsArea from './featured_tags/index.ts';
import discoveryArea from './discovery/index.ts';
import timelinesArea from './timelines/index.ts';
import notificationsArea from './notifications/index.ts';
import markersArea from './markers/index.ts';
import preferencesArea from './preferences/index.ts';
import filtersArea from './filters/index.ts';
import nodeinfoArea from './nodeinfo/index.ts';
import translationArea from './translation/index.ts';
import announcementsArea from './announcements/index.ts';
import searchArea from './search/index.ts';
import trendsArea from './trends/index.ts';
import adminTrendsArea from './admin_trends/index.ts';
import reportsArea from './reports/index.ts';
import ipAccessArea from './ip_access/index.ts';
import adminArea from './admin/index.ts';
import pushArea from './push/index.ts';
import conversationsArea from './conversations/index.ts';
import notificationRequestsArea from './notification_requests/index.ts';
import activityPubArea from './activitypub/index.ts';
import asyncRefreshesArea from './async_refreshes/index.ts';
import mediaProxyArea from './media_proxy/index.ts';
import webPages from '../web/index.ts';
import oembedArea from './oembed/index.ts';

export interface AreaOptions {
  core: Core;
}

const AREAS: FastifyPluginAsyncTypebox<AreaOptions>[] = [
  healthArea, // first: its latency hook must see every area's routes
  ipAccessArea, // second: its no_access check must cover every area after it
  instanceArea,
  mediaArea,
  filesArea,
  pollsArea,
  scheduledStatusesArea,
  statusesArea,
  asyncRefreshesArea,
  mediaProxyArea,
  favouritesArea,
  bookmarksArea,
  appsArea,
  oauthArea,
  webPages, // the pages (services/web): log-in, consent, sign-up, password, settings
  accountsArea,
  profileArea,
  emailsArea,
  streamingRedirectArea,
  followsArea,
  relationshipsArea,
  blocksArea,
  mutesArea,
  domainBlocksArea,
  accountStatusesArea,
  listsArea,
  collectionsArea,
  annualReportsArea,
  tagsArea,
  featuredTagsArea,
  discoveryArea,
  timelinesArea,
  notificationsArea,
  markersArea,
  preferencesArea,
  filtersArea,
  nodeinfoArea,
  translationArea,
  announcementsArea,
  searchArea,
  trendsArea,
  adminTrendsArea,
  reportsArea,
  adminArea,
  pushArea,
  conversationsArea,
  notificationRequestsArea,
  activityPubArea,
  oembedArea,
];

export async function registerAreas(app: FastifyInstance, core: Core): Promise<void> {
  for (const area of AREAS) await app.register(area, { core });
}
