// The NodeInfo 2.0 document (http://nodeinfo.diaspora.software/ns/schema/2.0): software, protocols,
// usage and registration state, computed from the data and cached with the instance documents.
import type { Core } from '../context.ts';
import { registrationsAllowed } from '../settings/settings.ts';
import { cachedDocument } from './cache.ts';
import { SOFTWARE } from './limits.ts';
import { getInstanceSettings } from './settings.ts';
import { instanceStats } from './stats.ts';

export const NODEINFO_PROFILE = 'http://nodeinfo.diaspora.software/ns/schema/2.0';
export const NODEINFO_CONTENT_TYPE = `application/json; profile="${NODEINFO_PROFILE}#"`;

export interface NodeInfo {
  version: '2.0';
  software: { name: string; version: string };
  protocols: string[];
  services: { inbound: string[]; outbound: string[] };
  openRegistrations: boolean;
  usage: { users: { total: number; activeMonth: number; activeHalfyear: number }; localPosts: number };
  metadata: Record<string, unknown>;
}

const CACHE_SECONDS = 1800;

export function nodeInfo(core: Core): Promise<NodeInfo> {
  return cachedDocument(core, 'nodeinfo', CACHE_SECONDS, async () => {
    const [stats, site, open] = await Promise.all([
      instanceStats(core),
      getInstanceSettings(core),
      registrationsAllowed(core),
    ]);
    return {
      version: '2.0',
      software: { name: SOFTWARE.name, version: SOFTWARE.version },
      protocols: ['activitypub'],
      services: { inbound: [], outbound: [] },
      // As Mastodon: anyone may sign up unless registrations are closed (approval is still sign-up).
      openRegistrations: open,
      usage: {
        users: { total: stats.userCount, activeMonth: stats.activeMonth, activeHalfyear: stats.activeHalfyear },
        localPosts: stats.statusCount,
      },
      metadata: { nodeName: site.siteTitle || core.config.localDomain, nodeDescription: site.siteShortDescription },
    };
  });
}
