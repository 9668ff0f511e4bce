// The client address behind TRUST_PROXY (issue 34): X-Forwarded-For read from the right, past trusted
// proxies only; ignored without TRUST_PROXY.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { clientAddress } from './client-address.js';

function req(peer: string | undefined, forwardedFor?: string): IncomingMessage {
  const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  return { headers, socket: { remoteAddress: peer } } as unknown as IncomingMessage;
}

test('no TRUST_PROXY: the peer, whatever X-Forwarded-For says', () => {
  for (const none of [0, []] as const) {
    const of = clientAddress(none);
    assert.equal(of(req('10.0.0.5', '203.0.113.7')), '10.0.0.5');
    assert.equal(of(req('10.0.0.5')), '10.0.0.5');
  }
});

test('a hop count: that many proxies are passed from the right, whatever their addresses', () => {
  const one = clientAddress(1);
  assert.equal(one(req('10.0.0.5', '203.0.113.7')), '203.0.113.7');
  // What the client wrote itself, left of what the proxy appended, is not read.
  assert.equal(one(req('10.0.0.5', '1.2.3.4, 203.0.113.7')), '203.0.113.7');
  // No header: the peer.
  assert.equal(one(req('10.0.0.5')), '10.0.0.5');
  const two = clientAddress(2);
  assert.equal(two(req('10.0.0.5', '1.2.3.4, 203.0.113.7, 10.0.0.9')), '203.0.113.7');
  // Fewer entries than hops: the leftmost.
  assert.equal(two(req('10.0.0.5', '203.0.113.7')), '203.0.113.7');
});

test('a list of proxies: the header is read only from a listed peer, and past listed proxies only', () => {
  const of = clientAddress(['10.0.0.0/8', '::1']);
  assert.equal(of(req('10.0.0.5', '203.0.113.7')), '203.0.113.7');
  assert.equal(of(req('::1', '203.0.113.7')), '203.0.113.7');
  assert.equal(of(req('::ffff:10.0.0.5', '203.0.113.7')), '203.0.113.7');
  // Two listed proxies in a row, then the client.
  assert.equal(of(req('10.0.0.5', '1.2.3.4, 203.0.113.7, 10.1.1.1')), '203.0.113.7');
  // A peer not on the list: its header is the client's own word, ignored.
  assert.equal(of(req('192.0.2.1', '203.0.113.7')), '192.0.2.1');
  // No socket address (never from a socket): unknown.
  assert.equal(of(req(undefined, '203.0.113.7')), undefined);
});
