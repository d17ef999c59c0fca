// The moderation dashboard (/admin, issue 27): staff pages over the same core operations as the
// admin API, each behind the role permission its API route names. Every form posts with a CSRF
// token; an action the core refuses (validation, rank) comes back as the page with the message.
import type { FastifyPluginAsync } from 'fastify';
import type { Core } from '../../core/context.ts';
import { adminKit, type AdminArea } from './kit.ts';
import dashboardPage from './dashboard.ts';
import reportPages from './reports.ts';
import accountPages from './accounts.ts';
import federationPages from './federation.ts';
import blockPages from './blocks.ts';
import settingsPages from './settings.ts';
import rulePages from './rules.ts';
import announcementPages from './announcements.ts';
import trendPages from './trends.ts';
import rolePages from './roles.ts';
import actionLogPages from './actionLogs.ts';
import customEmojiPages from './customEmojis.ts';

const AREAS: AdminArea[] = [
  dashboardPage,
  reportPages,
  accountPages,
  federationPages,
  blockPages,
  settingsPages,
  rulePages,
  announcementPages,
  trendPages,
  rolePages,
  actionLogPages,
  customEmojiPages,
];

const adminPages: FastifyPluginAsync<{ core: Core }> = async (app, { core }) => {
  const kit = adminKit(core);
  for (const area of AREAS) area(app, kit);
};

export default adminPages;
