// `cli delivery domains` lists the destinations delivery is backing off from or has parked (their
// circuit breaker open), `cli delivery reset HOST` closes a host's breaker: its parked jobs go out
// again, in order, from the next running delivery process.
import type { Core } from '../core/context.ts';
import { collection } from '../core/db/mongo.ts';
import { parkedDeliveries } from '../core/model/parkedDeliveries.ts';
import { allHostStates, resumeHost } from '../core/activitypub/delivery/hostState.ts';
import { CliError, type Out } from './commands.ts';

function ago(ms: number): string {
  if (ms <= 0) return '-';
  const s = Math.round((Date.now() - ms) / 1000);
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
}

export async function deliveryDomains(core: Core, out: Out): Promise<void> {
  const states = await allHostStates(core.redis);
  if (states.length === 0) {
    out('No failing or unavailable domains.');
    return;
  }
  out(['HOST', 'STATE', 'FAILS', 'FAILING SINCE', 'WAITING', 'PARKED', 'LAST ERROR'].join('\t'));
  for (const s of states) {
    const parked = await collection(core.db, parkedDeliveries).countDocuments({ host: s.host });
    const state = s.tripped > 0 ? 'unavailable' : s.until > Date.now() ? 'backing off' : 'ok';
    out([s.host, state, s.fails, ago(s.since), s.backlog, parked, s.error ?? '-'].join('\t'));
  }
}

export async function deliveryReset(core: Core, host: string, out: Out): Promise<void> {
  const h = host.trim().toLowerCase();
  if (!/^[a-z0-9.-]+(:\d{1,5})?$/.test(h)) throw new CliError(`Not a host name: ${host}`);
  const known = await resumeHost(core.redis, h);
  out(known ? `${h}: reset; parked deliveries will be sent again.` : `${h}: no delivery state; nothing to reset.`);
}
