import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import { illegalArguments } from '../../errors.js';

/**
 * Where a webhook may not be delivered (server-side request forgery: the service's own host and
 * network), unless WEBHOOK_ALLOW_PRIVATE=true. IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) meet the
 * IPv4 rules (BlockList checks them so).
 */
const forbidden = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network" (0.0.0.0 reaches the local host)
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['fc00::', 7], // unique local (private)
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv6');
}

/** Whether a webhook may not reach this address (an IPv4 or IPv6 literal). */
export const isForbiddenAddress = (address: string) => forbidden.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4');

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** The host of a URL as a name or an address literal (without an IPv6 literal's brackets). */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The addresses a webhook URL's host resolves to, every one of them allowed (else a 400 that names the
 * address): at registration, and before each delivery (`pinnedLookup`), so that a name that has come to
 * resolve to a private address since is refused too.
 */
export async function resolveAllowed(url: URL, allowPrivate: boolean, lookup = dns.promises.lookup): Promise<ResolvedAddress[]> {
  const host = hostOf(url);
  const addresses = net.isIP(host)
    ? [{ address: host, family: net.isIP(host) }]
    : await lookup(host, { all: true, verbatim: true }).catch((error: NodeJS.ErrnoException) => {
        throw illegalArguments(`url: the host '${host}' does not resolve (${error.code ?? error.message})`);
      });
  if (addresses.length === 0) throw illegalArguments(`url: the host '${host}' does not resolve`);
  const refused = allowPrivate ? undefined : addresses.find((resolved) => isForbiddenAddress(resolved.address));
  if (refused) {
    throw illegalArguments(
      `url: '${host}' resolves to ${refused.address}, a loopback, link-local, private, multicast or reserved address, where webhooks are not delivered (WEBHOOK_ALLOW_PRIVATE=true allows it)`,
    );
  }
  return addresses;
}

/**
 * A `lookup` for http.request that answers only the addresses `resolveAllowed` checked: the connection
 * goes to the address that was checked, not to whatever a second resolution might answer (DNS
 * rebinding). An address literal needs no lookup: it was checked as it is.
 */
export const pinnedLookup =
  (addresses: ResolvedAddress[]): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all) (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
