// Every address form of issue 34's campaign, and the ranges around them, judged without connecting anywhere.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { egressRefusal } from './egress.js';

/** [address, what the refusal must say] */
const REFUSED: Array<[string, RegExp]> = [
  ['0.0.0.0', /unspecified/],
  ['0.1.2.3', /unspecified/],
  ['10.1.2.3', /private/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['100.64.0.1', /carrierGradeNat/],
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['169.254.169.254', /linkLocal/],
  ['192.0.0.8', /reserved/],
  ['192.0.2.1', /reserved/],
  ['198.18.0.1', /reserved/],
  ['198.19.255.255', /reserved/],
  ['198.51.100.7', /reserved/],
  ['203.0.113.9', /reserved/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['240.0.0.1', /reserved/],
  ['255.255.255.254', /reserved/],
  ['255.255.255.255', /broadcast/],
  ['::', /unspecified/],
  ['::1', /loopback/],
  ['fe80::1', /linkLocal/],
  ['fe80::1%eth0', /linkLocal/],
  ['fc00::1', /uniqueLocal/],
  ['fd12:3456::1', /uniqueLocal/],
  ['fec0::1', /deprecatedSiteLocal/],
  ['ff02::1', /multicast/],
  ['100::1', /discard/],
  ['2001:db8::1', /reserved/],
  ['2001:2::1', /benchmarking/],
  ['5f00::1', /segmentRouting/],
  ['4000::1', /outside 2000::\/3/],
  // IPv4 inside IPv6: refused as such, the embedded address named.
  ['::ffff:127.0.0.1', /IPv4-mapped of 127\.0\.0\.1 \(loopback\)/],
  ['::ffff:7f00:1', /IPv4-mapped of 127\.0\.0\.1 \(loopback\)/],
  ['::ffff:8.8.8.8', /IPv4-mapped of 8\.8\.8\.8 \(unicast\)/],
  ['::127.0.0.1', /IPv4-compatible of 127\.0\.0\.1 \(loopback\)/],
  ['::7f00:1', /IPv4-compatible of 127\.0\.0\.1 \(loopback\)/],
  ['::ffff:0:a9fe:a9fe', /rfc6145\) of 169\.254\.169\.254 \(linkLocal\)/],
  ['64:ff9b::a9fe:a9fe', /NAT64 \(rfc6052\) of 169\.254\.169\.254 \(linkLocal\)/],
  ['64:ff9b::169.254.169.254', /NAT64 \(rfc6052\) of 169\.254\.169\.254 \(linkLocal\)/],
  ['64:ff9b::808:808', /NAT64 \(rfc6052\) of 8\.8\.8\.8 \(unicast\)/],
  ['64:ff9b:1::a9fe:a9fe', /rfc6052/],
  ['2002:a9fe:a9fe::1', /6to4 of 169\.254\.169\.254 \(linkLocal\)/],
  ['2002:7f00:1::', /6to4 of 127\.0\.0\.1 \(loopback\)/],
  // Teredo: 2001:0:<server>:<flags>:<port ^ ffff>:<client ^ ffff ffff>; client 127.0.0.1 here.
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', /Teredo of 127\.0\.0\.1 \(loopback\)/],
  ['2001::1', /Teredo/],
];

const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '172.32.0.1',
  '100.128.0.1',
  '192.0.3.1',
  '198.20.0.1',
  '223.255.255.1',
];
const ALLOWED_V6 = ['2606:4700::1111', '2a00:1450:4001:81a::200e', '2001:4860:4860::8888'];

test('every non-global form is refused, naming its range (and an embedded IPv4 and its range)', () => {
  for (const [address, why] of REFUSED) {
    const refusal = egressRefusal(address);
    assert.ok(refusal !== undefined, `${address} was allowed`);
    assert.match(refusal, why, address);
    assert.ok(refusal.startsWith(address), refusal);
  }
});

test('global unicast passes; a name is left to the connection-time check', () => {
  for (const a of [...ALLOWED, ...ALLOWED_V6]) assert.equal(egressRefusal(a), undefined, a);
  assert.equal(egressRefusal('example.com'), undefined);
  assert.equal(egressRefusal('localhost'), undefined);
});

test('the WHATWG URL forms of the campaign are what is judged', () => {
  for (const [url, why] of [
    ['http://[::127.0.0.1]/x', /loopback/],
    ['http://[64:ff9b::169.254.169.254]/x', /169\.254\.169\.254/],
    ['http://[::ffff:10.0.0.1]/x', /private/],
    ['http://0x7f.1/x', /loopback/],
    ['http://2130706433/x', /loopback/],
    ['http://0177.0.0.1/x', /loopback/],
  ] as const) {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    assert.match(egressRefusal(host) ?? 'allowed', why, url);
  }
});
