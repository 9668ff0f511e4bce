// An open-loop load generator: requests are sent on a fixed schedule whatever the server does, and each
// latency is measured from the moment its request was due (no coordinated omission). autocannon's
// `overallRate` sends in bursts (a bare node:http server shows a 10 ms p99 under it at any rate), so
// fixed-rate latency is measured with this instead. Prints one JSON line.
import { Pool } from 'undici';

const { url, body, headers, rate, seconds, connections } = JSON.parse(process.argv[2] ?? '{}') as {
  url: string;
  body: string;
  headers: Record<string, string>;
  rate: number;
  seconds: number;
  connections: number;
};
const target = new URL(url);
const pool = new Pool(target.origin, { connections, pipelining: 1 });
const payload = Buffer.from(body);
const latencies: number[] = [];
let failures = 0;
let inFlight = 0;

function send(due: number, record: boolean): void {
  inFlight++;
  pool.request({ path: target.pathname, method: 'POST', headers, body: payload }).then(
    async (res) => {
      await res.body.dump();
      inFlight--;
      if (res.statusCode !== 200) failures++;
      if (record) latencies.push(performance.now() - due);
    },
    () => {
      inFlight--;
      failures++;
    },
  );
}

const warmup = 1000;
const start = performance.now();
const end = start + warmup + seconds * 1000;
let sent = 0;
await new Promise<void>((resolve) => {
  const tick = () => {
    const now = performance.now();
    // Every request due by now goes out now, stamped with its due time.
    const due = Math.floor(((Math.min(now, end) - start) * rate) / 1000);
    for (; sent < due; sent++) {
      const at = start + (sent * 1000) / rate;
      send(at, at >= start + warmup);
    }
    if (now < end) setImmediate(tick);
    else resolve();
  };
  tick();
});
while (inFlight > 0) await new Promise((r) => setTimeout(r, 5));
await pool.close();
latencies.sort((a, b) => a - b);
const q = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN;
process.stdout.write(
  `${JSON.stringify({ rate, count: latencies.length, failures, p50: q(0.5), p99: q(0.99), p999: q(0.999), max: latencies.at(-1) })}\n`,
);
