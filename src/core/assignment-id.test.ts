import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assignmentIdFor, clientAssignmentIdFor, crcCheck, readAssignmentId } from './assignment-id.js';

const UUID = '01972ff0-f582-7a3c-9e41-52b8c6d0e7f3';

test('an assignment id reads back the version, variant and user it was issued for', () => {
  for (const userId of ['user-42', 'ü ñ 🙂 / + =', 'x'.repeat(512)]) {
    const id = assignmentIdFor(UUID, 7, { version: 12, variantIndex: 3, userId });
    assert.ok(id.startsWith(`${UUID}.`));
    assert.deepEqual(readAssignmentId(id, 7), { byServer: true, version: 12, variantIndex: 3, userId });
  }
});

test("the server's own ids are told apart from ids a client made with either check", () => {
  const issued = { version: 2, variantIndex: 1, userId: 'u-1' };
  const server = assignmentIdFor(UUID, 7, issued);
  const client = clientAssignmentIdFor(UUID, 7, issued);
  assert.notEqual(server, client);
  assert.equal(readAssignmentId(server, 7)?.byServer, true);
  assert.deepEqual(readAssignmentId(client, 7), issued);
  const body = client.slice(0, client.lastIndexOf('.'));
  assert.deepEqual(readAssignmentId(`${body}.${crcCheck(7, body)}`, 7), issued);
  assert.equal(readAssignmentId(server, 8), null, 'keyed by the experiment');
});

test('ids this service did not issue in this experiment read as null', () => {
  const id = assignmentIdFor(UUID, 7, { version: 1, variantIndex: 0, userId: 'user-42' });
  assert.equal(readAssignmentId(id, 8), null, 'another experiment');
  assert.equal(readAssignmentId(id.replace('.1.0.', '.1.1.'), 7), null, 'another variant');
  assert.equal(readAssignmentId(UUID, 7), null, 'a bare UUID');
  assert.equal(readAssignmentId('', 7), null);
  assert.equal(readAssignmentId(`${id}x`, 7), null);
});

test("a client's id with the CRC-32 check (ADR 0019) reads back like the server's own", () => {
  const issued = { version: 3, variantIndex: 1, userId: 'u-42' };
  const id = clientAssignmentIdFor(UUID, 7, issued);
  const body = id.slice(0, id.lastIndexOf('.'));
  const withCrc = `${body}.${crcCheck(7, body)}`;
  assert.notEqual(withCrc, id);
  assert.deepEqual(readAssignmentId(withCrc, 7), issued);
  assert.equal(readAssignmentId(withCrc, 8), null, 'keyed by the experiment');
  // zlib's CRC-32 of the body's bytes, started from the key: what Python computes with zlib.crc32(body, 7)
  assert.equal(crcCheck(7, 'abc'), '306b5747');
});

test('an id naming a user assign would refuse (empty, NUL, over 512 characters, not UTF-8) reads as null', () => {
  const made = (userId: string) => assignmentIdFor(UUID, 7, { version: 1, variantIndex: 0, userId });
  for (const userId of ['', 'a\u0000b', 'x'.repeat(513), '🙂'.repeat(513)]) {
    assert.equal(readAssignmentId(made(userId), 7), null, JSON.stringify(userId.slice(0, 20)));
  }
  // 512 characters outside the BMP are 1024 UTF-16 units: still 512 characters, as assign counts them
  assert.equal(readAssignmentId(made('🙂'.repeat(512)), 7)?.userId, '🙂'.repeat(512));
  assert.equal(
    readAssignmentId(made('a\ufffdb'), 7)?.userId,
    'a\ufffdb',
    'a real U+FFFD is a character like any',
  );
  // bytes that are not UTF-8, with a valid check over them, name no user assign could have been given
  const body = `${UUID}.1.0.${Buffer.from([0x61, 0xff, 0x62]).toString('base64')}`;
  assert.equal(readAssignmentId(`${body}.${crcCheck(7, body)}`, 7), null);
});
