// An open-loop load generator: requests are due on a fixed schedule whatever the server does, and each
// latency is measured from the moment its request was due (no coordinated omission). A request due
// while every connection is busy waits for one, and that wait counts.
//
// It speaks HTTP/1.1 over raw sockets with one pre-built request, so its own cost per request is a few
// microseconds: an HTTP client library (undici) spent enough per request to put a 3-10 ms floor
// under every p99 it measured, the bare baseline's included. Servers must answer with a
// content-length (all servers in this benchmark do). Prints one JSON line.
//
// The generator watches itself: a turn of its loop that comes more than STALL_MS after the previous one
// is a stall of the instrument (its own garbage collection, or its core taken by the host: a C busy
// loop on an idle 2-core VM here sees gaps of 4-8 ms). Requests due during a stall go out late and
// their answers are read late, so their latencies measure the generator, not the server. It prints the
// p99 over all requests, the p99 over requests whose time in flight touched no stall ("clean"), and
// the stalls themselves, so a reader can tell the server's tail from the instrument's.
import { connect, type Socket } from 'node:net';

const { url, body, headers, rate, seconds, connections, warmupSeconds } = JSON.parse(
  process.argv[2] ?? '{}',
) as {
  url: string;
  body: string;
  headers: Record<string, string>;
  rate: number;
  seconds: number;
  connections: number;
  warmupSeconds?: number;
};

const target = new URL(url);
const request = Buffer.from(
  `POST ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
);

const warmup = (warmupSeconds ?? 2) * 1000;
const total = Math.ceil((rate * (warmup + seconds * 1000)) / 1000);
const recorded = new Float64Array(total);
/** Due time of each recorded request (same index as `recorded`). */
const recordedDue = new Float64Array(total);
let count = 0;
/** A loop turn this much later than the previous one is a stall of the generator (ms). */
const STALL_MS = 1;
/** Stalls as [from, to] times, in order: after the warm-up, until the last answer is read. */
const stalls: Array<[number, number]> = [];
let failures = 0;
let done = 0;

interface Connection {
  socket: Socket;
  /** Due time of the request in flight, or null when idle. */
  due: number | null;
  buffer: Buffer;
}

const idle: Connection[] = [];
/** Due times of requests waiting for a connection. */
const backlog: number[] = [];
let start = 0;

function send(c: Connection, due: number): void {
  c.due = due;
  c.socket.write(request);
}

function finish(c: Connection, ok: boolean): void {
  const due = c.due!;
  c.due = null;
  done++;
  if (!ok) failures++;
  else if (due >= start + warmup) {
    recordedDue[count] = due;
    recorded[count++] = performance.now() - due;
  }
  const next = backlog.shift();
  if (next !== undefined) send(c, next);
  else idle.push(c);
}

/** Consumes complete responses from the connection's buffer. */
function onData(c: Connection, chunk: Buffer): void {
  c.buffer = c.buffer.length === 0 ? chunk : Buffer.concat([c.buffer, chunk]);
  for (;;) {
    const end = c.buffer.indexOf('\r\n\r\n');
    if (end === -1) return;
    const head = c.buffer.toString('latin1', 0, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) throw new Error(`response without content-length:\n${head}`);
    const size = end + 4 + Number(length[1]);
    if (c.buffer.length < size) return;
    const status = Number(head.slice(9, 12));
    c.buffer = c.buffer.subarray(size);
    finish(c, status >= 200 && status < 300);
  }
}

await Promise.all(
  Array.from(
    { length: connections },
    () =>
      new Promise<void>((resolve, reject) => {
        const socket = connect({ host: target.hostname, port: Number(target.port), noDelay: true });
        const c: Connection = { socket, due: null, buffer: Buffer.alloc(0) };
        socket.on('data', (chunk: Buffer) => onData(c, chunk));
        socket.once('connect', () => {
          idle.push(c);
          resolve();
        });
        socket.on('error', reject);
      }),
  ),
);

start = performance.now();
const end = start + warmup + seconds * 1000;
let sent = 0;
let lastTurn = start;
await new Promise<void>((resolve) => {
  const tick = () => {
    const now = performance.now();
    if (now - lastTurn > STALL_MS && now > start + warmup) stalls.push([lastTurn, now]);
    lastTurn = now;
    // Every request due by now goes out now (or joins the backlog), stamped with its due time.
    const due = Math.min(total, Math.floor(((Math.min(now, end) - start) * rate) / 1000));
    for (; sent < due; sent++) {
      const at = start + (sent * 1000) / rate;
      const c = idle.pop();
      if (c) send(c, at);
      else backlog.push(at);
    }
    if (now > end + 10_000) {
      failures += sent - done; // never answered
      resolve();
    } else if (now < end || done < sent) setImmediate(tick);
    else resolve();
  };
  tick();
});
for (const c of [...idle]) c.socket.destroy();

/** Does [from, to] overlap a stall? Stalls are disjoint and in order: binary search on their ends. */
function touchesStall(from: number, to: number): boolean {
  let lo = 0;
  let hi = stalls.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (stalls[mid]![1] < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < stalls.length && stalls[lo]![0] <= to;
}

const clean = new Float64Array(count);
let cleanCount = 0;
for (let i = 0; i < count; i++) {
  if (!touchesStall(recordedDue[i]!, recordedDue[i]! + recorded[i]!)) clean[cleanCount++] = recorded[i]!;
}
const quantile = (xs: Float64Array, p: number) =>
  xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? Number.NaN;
const latencies = recorded.subarray(0, count).sort();
const cleanLatencies = clean.subarray(0, cleanCount).sort();
const stalled = stalls.map(([from, to]) => to - from);
process.stdout.write(
  `${JSON.stringify({
    rate,
    count,
    failures,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    p999: quantile(latencies, 0.999),
    max: latencies[count - 1],
    clean: { count: cleanCount, p99: quantile(cleanLatencies, 0.99) },
    stalls: {
      count: stalls.length,
      totalMs: stalled.reduce((a, b) => a + b, 0),
      maxMs: stalled.length > 0 ? Math.max(...stalled) : 0,
    },
  })}\n`,
);
process.exit(0);
