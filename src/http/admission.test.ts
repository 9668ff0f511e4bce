import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import Fastify from 'fastify';
import { createAdmission } from './admission.js';

/** POST {} to `url`; `signal` aborts it. */
function work(url: string, signal?: AbortSignal): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal });
}

async function appWith(limit: number, gate: Promise<void>) {
  const admission = createAdmission(limit);
  const app = Fastify();
  app.post('/work', { preParsing: admission.preParsing }, async () => {
    await gate;
    return { ok: true };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { app, admission, url: `http://127.0.0.1:${port}/work` };
}

test('beyond the limit requests wait, and every slot comes back', async () => {
  let open!: () => void;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  const { app, admission, url } = await appWith(2, gate);
  try {
    const calls = Array.from({ length: 5 }, () => work(url));
    for (let i = 0; i < 50 && admission.waiting < 3; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(admission.active, 2);
    assert.equal(admission.waiting, 3);
    open();
    const answers = await Promise.all(calls);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200],
    );
    for (let i = 0; i < 50 && admission.active > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(admission.active, 0);
  } finally {
    await app.close();
  }
});

test('clients that hang up, holding a slot or waiting for one, give it back', async () => {
  let open!: () => void;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  const { app, admission, url } = await appWith(1, gate);
  try {
    const aborts = Array.from({ length: 3 }, () => new AbortController());
    const calls = aborts.map((a) => work(url, a.signal).catch(() => 'aborted'));
    for (let i = 0; i < 50 && admission.waiting < 2; i++) await new Promise((r) => setTimeout(r, 10));
    for (const a of aborts) a.abort();
    await Promise.all(calls);
    open();
    for (let i = 0; i < 100 && admission.active > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(admission.active, 0);
    assert.equal(admission.waiting, 0);
    const after = await work(url);
    assert.equal(after.status, 200, 'a later request still gets through');
  } finally {
    await app.close();
  }
});

test('a pipelined request whose connection dies behind an unfinished answer gives its slot back', async () => {
  const admission = createAdmission(1);
  const app = Fastify();
  // An answer that never finishes, so the request pipelined behind it waits in Node's queue.
  app.get('/stream', (_request, reply) => {
    reply.send(new Readable({ read() {} }));
  });
  app.post('/work', { preParsing: admission.preParsing }, async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  try {
    for (let i = 0; i < 3; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise<void>((r) => socket.once('connect', () => r()));
      socket.write(
        'GET /stream HTTP/1.1\r\nHost: x\r\n\r\n' +
          'POST /work HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}',
      );
      await new Promise((r) => setTimeout(r, 100));
      socket.destroy();
    }
    for (let i = 0; i < 50 && admission.active > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(admission.active, 0);
    const after = await work(`http://127.0.0.1:${port}/work`);
    assert.equal(after.status, 200, 'a later request still gets through');
  } finally {
    await app.close();
  }
});
