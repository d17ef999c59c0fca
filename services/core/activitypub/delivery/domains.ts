// Whether the instance refuses to federate with a destination (a suspending domain block, covering
// subdomains, or a domain not on the allowlist in limited-federation mode): nothing goes there.
import type { Core } from '../../context.ts';
import { isDomainRejected } from '../../moderation/domainBlocks.ts';

/** `host` as in a URL (a port is allowed; a rule on the bare domain covers every port). */
export async function isDomainRefused(core: Core, host: string): Promise<boolean> {
  const bare = host.replace(/:\d+$/, '');
  if (await isDomainRejected(core, host)) return true;
  return bare !== host && (await isDomainRejected(core, bare));
}
