// Who the client is, for the failed-authentication lockout (issue 34): the socket's peer, unless that
// peer is a proxy TRUST_PROXY names; then X-Forwarded-For, read from the right, past every trusted
// proxy, to the first address no trusted proxy wrote. Without TRUST_PROXY the header is ignored, so a
// client cannot pick its own address. @fastify/proxy-addr (Fastify's proxy-addr, as Express uses it)
// does the walk and the address matching.
import type { IncomingMessage } from 'node:http';
import proxyaddr from '@fastify/proxy-addr';

/**
 * Which peers may say who the client is (TRUST_PROXY): a hop count (that many proxies in front, whatever
 * their addresses; 0: none), or their addresses and CIDRs (also `loopback`, `linklocal`, `uniquelocal`).
 */
export type TrustProxy = number | readonly string[];

/** The client address of a request; undefined when there is no socket address (never from a socket). */
export type ClientAddress = (req: IncomingMessage) => string | undefined;

/** Throws (naming the entry) when an entry is neither an address, a CIDR, nor a range name. */
export function checkTrustedProxies(entries: readonly string[]): void {
  proxyaddr.compile([...entries]);
}

export function clientAddress(trust: TrustProxy): ClientAddress {
  const peer: ClientAddress = (req) => req.socket?.remoteAddress;
  if (trust === 0 || (typeof trust !== 'number' && trust.length === 0)) return peer;
  // proxy-addr numbers the socket's peer 0, then X-Forwarded-For from its right end.
  const trusted =
    typeof trust === 'number' ? (_: string, i: number) => i < trust : proxyaddr.compile([...trust]);
  return (req) => (peer(req) === undefined ? undefined : proxyaddr(req, trusted));
}
