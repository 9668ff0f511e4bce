// Which addresses a webhook may reach under WEBHOOK_DENY_PRIVATE (issue 34 item 5): only global unicast, by
// ipaddr.js's range table (its ranges follow the IANA special-purpose registries). Every other range is
// refused; forms that carry an IPv4 address inside an IPv6 one (mapped, compatible, NAT64, 6to4, Teredo)
// are refused as such, and their reason names the embedded address and its range, since that is what a
// gateway on the way would reach. Pure.
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

function v4(high: number, low: number): IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 address an IPv6 form carries, and what the form is called; undefined for none. */
function embedded(ip: IPv6, range: string): { form: string; inner: IPv4 } | undefined {
  const p = ip.parts;
  switch (range) {
    case 'ipv4Mapped':
      return { form: 'IPv4-mapped', inner: ip.toIPv4Address() };
    case 'rfc6145':
      return { form: 'IPv4-translated (rfc6145)', inner: v4(p[6]!, p[7]!) };
    case 'rfc6052':
      // 64:ff9b::/96 carries it in the last 32 bits; 64:ff9b:1::/48 (local use) wherever its operator chose.
      return p[2] === 0 ? { form: 'NAT64 (rfc6052)', inner: v4(p[6]!, p[7]!) } : undefined;
    case '6to4':
      return { form: '6to4', inner: v4(p[1]!, p[2]!) };
    case 'teredo':
      // The client's address, stored inverted (RFC 4380 section 4).
      return { form: 'Teredo', inner: v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff) };
    case 'unicast':
      // ::a.b.c.d, IPv4-compatible (deprecated by RFC 4291), which ipaddr.js files under unicast.
      return p.slice(0, 6).every((x) => x === 0)
        ? { form: 'IPv4-compatible', inner: v4(p[6]!, p[7]!) }
        : undefined;
    default:
      return undefined;
  }
}

/**
 * IPv6 text as the WHATWG URL parser writes it, the zone dropped (it does not change the range):
 * ipaddr.js 2.5 reads `::127.0.0.1` as `::ffff:127.0.0.1`, which would misname the form.
 */
function canonical(address: string): string {
  if (!address.includes(':')) return address;
  const bare = address.replace(/%.*$/, '');
  try {
    return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return bare;
  }
}

/**
 * Why `address` (an IP address) is not one a webhook may reach: `'<address> is loopback'`, or for an
 * IPv6 form carrying an IPv4 address `'<address> is NAT64 (rfc6052) of 169.254.169.254 (linkLocal)'`.
 * Undefined for a global unicast address, and for anything that is not an IP address (a name: it is
 * judged by what it resolves to, when connecting).
 */
export function egressRefusal(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  const ip = ipaddr.parse(canonical(address));
  if (ip.kind() === 'ipv4') {
    const range = (ip as IPv4).range();
    return range === 'unicast' ? undefined : `${address} is ${range}`;
  }
  const v6 = ip as IPv6;
  const range = v6.range();
  const inner = embedded(v6, range);
  if (inner !== undefined) {
    return `${address} is ${inner.form} of ${inner.inner.toString()} (${inner.inner.range()})`;
  }
  // Global unicast is 2000::/3 (RFC 4291); ipaddr.js calls every address it has no range for unicast.
  if (range === 'unicast' && (v6.parts[0]! & 0xe000) === 0x2000) return undefined;
  return `${address} is ${range === 'unicast' ? 'not global unicast (outside 2000::/3)' : range}`;
}
