// Which network addresses the server may connect to on a user's behalf (Web Push endpoints, and any
// other URL that remote or user input names). Private, loopback, link-local, multicast and other
// special-purpose ranges are refused (SSRF), unless ALLOWED_PRIVATE_ADDRESSES (a comma-separated CIDR
// list, as Mastodon's variable) lets some of them through. The check runs inside the socket's DNS
// lookup, so a host name cannot resolve to a public address when checked and a private one when used.
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';

const SPECIAL_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
const SPECIAL_V6 = [
  '::/128',
  '::1/128',
  '64:ff9b::/96',
  '100::/64',
  '2001:db8::/32',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
];

function addSubnet(list: BlockList, cidr: string): void {
  const [net, bits] = cidr.split('/');
  const family = isIP(net ?? '');
  if (!net || family === 0) throw new Error(`not an IP network: ${cidr}`);
  const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128))
    throw new Error(`not an IP network: ${cidr}`);
  list.addSubnet(net, prefix, family === 4 ? 'ipv4' : 'ipv6');
}

/** Parses a comma-separated CIDR list (a bare address is a /32 or /128); throws on a bad entry. */
export function parseCidrList(raw: string): string[] {
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const probe = new BlockList();
  for (const e of entries) addSubnet(probe, e);
  return entries;
}

export class AddressPolicy {
  private readonly special = new BlockList();
  private readonly allowed = new BlockList();

  constructor(allowedPrivate: readonly string[] = []) {
    for (const c of SPECIAL_V4) addSubnet(this.special, c);
    for (const c of SPECIAL_V6) addSubnet(this.special, c);
    for (const c of allowedPrivate) addSubnet(this.allowed, c);
  }

  /** True when a connection to this literal address is allowed. */
  permits(address: string): boolean {
    let addr = address;
    let family = isIP(addr);
    if (family === 0) return false;
    // IPv4-mapped IPv6 (::ffff:10.0.0.1) is the IPv4 address in disguise.
    const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr) : null;
    if (mapped?.[1]) {
      addr = mapped[1];
      family = 4;
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (this.allowed.check(addr, type)) return true;
    return !this.special.check(addr, type);
  }

  /** A `lookup` for http(s).request that fails with EADDRNOTAVAIL-like errors for refused addresses. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const ok = addresses.filter((a) => this.permits(a.address));
      if (ok.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to refused (private) addresses`), {
          code: 'EREFUSEDADDRESS',
        });
        return callback(refused, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, ok);
      const first = ok[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };

  /** Resolves a host name and tells whether every address it has may be reached (validation). */
  async hostPermitted(hostname: string): Promise<boolean> {
    const host = hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return this.permits(host);
    return new Promise((resolve) => {
      dnsLookup(host, { all: true }, (err, addresses) => {
        if (err || addresses.length === 0) return resolve(false);
        resolve(addresses.some((a) => this.permits(a.address)));
      });
    });
  }
}
