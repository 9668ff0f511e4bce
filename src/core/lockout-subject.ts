// Which subject a client address counts against in the failed-authentication lockout (issue 34; ADR 0017):
// an IPv4 address as itself, an IPv4-mapped IPv6 address as its IPv4 address, and any other IPv6 address
// by its /64, since one client (one home, one cloud instance) holds a whole /64 and could step through its
// addresses to escape a lockout per address. Link-local addresses stay whole: fe80::/64 is on every link,
// so its /64 would be every neighbour's at once. Pure.
import ipaddr from 'ipaddr.js';

/** The lockout subject of `address`: `192.0.2.1`, `2001:db8:1:2::/64`; anything not an IP address as it is. */
export function lockoutSubject(address: string | undefined): string | undefined {
  if (address === undefined || !address.includes(':')) return address;
  // The zone (`%eth0`) names an interface of this host, not the client (and may hold `_`, which only key
  // prefixes have: the two kinds of subject never clash).
  const bare = address.replace(/%.*$/, '');
  if (!ipaddr.IPv6.isValid(bare)) return address;
  const ip = ipaddr.IPv6.parse(bare);
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address().toString();
  if (ip.range() === 'linkLocal') return ip.toString();
  const [a, b, c, d] = ip.parts;
  return `${new ipaddr.IPv6([a!, b!, c!, d!, 0, 0, 0, 0]).toString()}/64`;
}
