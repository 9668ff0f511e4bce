// The outbox holds answers until the check phase, then writes them all, in order. Responses here are
// fakes that record what was written; the fast path's tests run the outbox on a real server.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { createOutbox } from './outbox.js';

type Written = [name: string, status: number, headers: string[], body: string];

function fakeResponse(name: string, written: Written[], fails = false): ServerResponse {
  let status = 0;
  let headers: string[] = [];
  return {
    destroy() {
      written.push([name, -1, [], 'destroyed']);
      return this;
    },
    writeHead(s: number, h: string[]) {
      if (fails) throw new Error(`${name} cannot be written`);
      status = s;
      headers = h;
      return this;
    },
    end(body: string) {
      written.push([name, status, headers, body]);
      return this;
    },
  } as unknown as ServerResponse;
}

/** nosniff and no-store, as on every answer (security-headers.ts). */
const SECURITY = ['x-content-type-options', 'nosniff', 'cache-control', 'no-store'];

const nextCheckPhase = () => new Promise<void>((r) => setImmediate(r));

describe('createOutbox', () => {
  test('writes nothing at once, then every queued answer in order with its length and the security headers', async () => {
    const written: Written[] = [];
    const outbox = createOutbox((err) => assert.fail(String(err)));
    outbox.send(fakeResponse('a', written), 200, '{"variant":"é"}');
    outbox.send(fakeResponse('b', written), 503, '{"error":"away"}', 2);
    assert.deepEqual(written, []);
    await nextCheckPhase();
    assert.deepEqual(written, [
      [
        'a',
        200,
        ['content-type', 'application/json; charset=utf-8', 'content-length', '16', ...SECURITY],
        '{"variant":"é"}',
      ],
      [
        'b',
        503,
        [
          'content-type',
          'application/json; charset=utf-8',
          'content-length',
          '16',
          ...SECURITY,
          'retry-after',
          '2',
        ],
        '{"error":"away"}',
      ],
    ]);
  });

  test('answers queued while writing wait for the next check phase, and are not lost', async () => {
    const written: Written[] = [];
    const outbox = createOutbox((err) => assert.fail(String(err)));
    outbox.send(fakeResponse('first', written), 200, '1');
    await nextCheckPhase();
    outbox.send(fakeResponse('second', written), 200, '2');
    assert.deepEqual(
      written.map((w) => w[0]),
      ['first'],
    );
    await nextCheckPhase();
    assert.deepEqual(
      written.map((w) => w[0]),
      ['first', 'second'],
    );
  });

  test('an answer that throws is reported, its connection dropped, and the rest are still written', async () => {
    const written: Written[] = [];
    const errors: unknown[] = [];
    const outbox = createOutbox((err) => errors.push(err));
    outbox.send(fakeResponse('broken', written, true), 200, '1');
    outbox.send(fakeResponse('fine', written), 200, '2');
    await nextCheckPhase();
    assert.deepEqual(
      written.map((w) => [w[0], w[3]]),
      [
        ['broken', 'destroyed'],
        ['fine', '2'],
      ],
    );
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /broken cannot be written/);
  });

  test('the answer that fills the outbox is written at once, with those before it', async () => {
    const written: Written[] = [];
    const outbox = createOutbox((err) => assert.fail(String(err)), 3);
    outbox.send(fakeResponse('a', written), 200, '1');
    outbox.send(fakeResponse('b', written), 200, '2');
    assert.deepEqual(written, []);
    outbox.send(fakeResponse('c', written), 200, '3');
    assert.deepEqual(
      written.map((w) => w[0]),
      ['a', 'b', 'c'],
    );
    outbox.send(fakeResponse('d', written), 200, '4');
    assert.equal(written.length, 3);
    await nextCheckPhase();
    assert.deepEqual(
      written.map((w) => w[0]),
      ['a', 'b', 'c', 'd'],
    );
  });

  test('write sends at once, past any queued answers, and drops a connection it cannot write to', () => {
    const written: Written[] = [];
    const errors: unknown[] = [];
    const outbox = createOutbox((err) => errors.push(err));
    outbox.send(fakeResponse('queued', written), 200, '1');
    outbox.write(fakeResponse('now', written), 200, '2');
    outbox.write(fakeResponse('broken', written, true), 200, '3');
    assert.deepEqual(
      written.map((w) => [w[0], w[3]]),
      [
        ['now', '2'],
        ['broken', 'destroyed'],
      ],
    );
    assert.equal(errors.length, 1);
  });
});
