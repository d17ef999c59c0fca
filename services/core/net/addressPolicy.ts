// Which network addresses the server may connect to on a user's behalf (Web Push endpoints, and any
// other URL that remote or user input names). Private, loopback, link-local, multicast and other
// special-purpose ranges are refused (SSRF), unless ALLOWED_PRIVATE_ADDRESSES (a comma-separated CIDR
// list, as Mastodon's variable) lets some of them through. The check runs inside the socket's DNS
// lookup, so a host name cannot resolve to a public address when checked and a private one when used.
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isAddressAllowedBy } from '../activitypub/safeFetch.ts';

export class AddressPolicy {
  private readonly allowedPrivate: readonly string[];

  /** `allowedPrivate`: ALLOWED_PRIVATE_ADDRESSES as parsed by the configuration ("address/prefix"). */
  constructor(allowedPrivate: readonly string[] = []) {
    this.allowedPrivate = allowedPrivate;
  }

  /** True when a connection to this literal address is allowed (the federation fetcher's rule). */
  permits(address: string): boolean {
    return isAddressAllowedBy(this.allowedPrivate, address);
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
