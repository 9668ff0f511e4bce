// The lockout subject of each address form a client may arrive with (issue 34's IPv6 leftover).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lockoutSubject } from './lockout-subject.js';

test('an IPv4 address is its own subject', () => {
  assert.equal(lockoutSubject('198.51.100.7'), '198.51.100.7');
  assert.notEqual(lockoutSubject('198.51.100.7'), lockoutSubject('198.51.100.8'));
});

test('an IPv4-mapped IPv6 address counts as its IPv4 address, in every spelling', () => {
  for (const mapped of [
    '::ffff:198.51.100.7',
    '::FFFF:198.51.100.7',
    '::ffff:c633:6407',
    '0:0:0:0:0:ffff:c633:6407',
  ]) {
    assert.equal(lockoutSubject(mapped), '198.51.100.7', mapped);
  }
});

test('IPv6 addresses count by their /64, however they are written', () => {
  const forms = [
    '2001:db8:1:2::1',
    '2001:db8:1:2:ffff:ffff:ffff:ffff',
    '2001:DB8:1:2:a:b:c:d',
    '2001:0db8:0001:0002:0000:0000:0000:0001',
    '2001:db8:1:2::1%eth0',
  ];
  for (const form of forms) assert.equal(lockoutSubject(form), '2001:db8:1:2::/64', form);
  // The next /64 is another subject.
  assert.equal(lockoutSubject('2001:db8:1:3::1'), '2001:db8:1:3::/64');
  assert.equal(lockoutSubject('2a00:1450:4001:82a::200e'), '2a00:1450:4001:82a::/64');
  assert.equal(lockoutSubject('::1'), '::/64');
  assert.equal(lockoutSubject('fd12:3456:789a:1::5'), 'fd12:3456:789a:1::/64');
});

test('link-local addresses stay whole: fe80::/64 is every neighbour on the link', () => {
  assert.equal(lockoutSubject('fe80::1'), 'fe80::1');
  assert.equal(lockoutSubject('FE80::1%eth_0'), 'fe80::1');
  assert.notEqual(lockoutSubject('fe80::1'), lockoutSubject('fe80::2'));
});

test('no address, or text that is not one, is left as it is', () => {
  assert.equal(lockoutSubject(undefined), undefined);
  assert.equal(lockoutSubject('unknown'), 'unknown');
  assert.equal(lockoutSubject('not:an:address:at:all'), 'not:an:address:at:all');
});

test('a subject never has `_` (key prefixes do: the two kinds never clash)', () => {
  for (const a of [
    '198.51.100.7',
    '::ffff:198.51.100.7',
    '2001:db8::1',
    'fe80::1%eth_0',
    '2001:db8::1%eth_0',
  ]) {
    assert.ok(!lockoutSubject(a)!.includes('_'), a);
  }
});
