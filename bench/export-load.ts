// /healthz while exports stream (issue 13's hole 3; the timing issue 24 moved out of npm test): four NDJSON
// exports of the 1M-result experiment read at full speed, each over its own connection, while /healthz is
// asked every 20 ms; the figure is /healthz's latency during the exports beside its latency idle.
import { request } from 'node:http';

export interface ExportLoadSample {
  exports: number;
  /** Lines read from all exports before they ended or the time ran out. */
  lines: number;
  seconds: number;
  idle: { median: number; p99: number; n: number };
  during: { median: number; p99: number; max: number; n: number };
}

const POLL_MS = 20;

function get(url: URL, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request({ host: url.hostname, port: url.port, path, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Counts an export's lines until it ends or `signal` aborts it (then the socket is destroyed). */
function exportLines(
  url: URL,
  path: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let lines = 0;
    const req = request({ host: url.hostname, port: url.port, path, headers, agent: false }, (res) => {
      res.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve(lines));
      res.on('close', () => resolve(lines));
      res.on('error', () => resolve(lines));
    });
    signal.addEventListener('abort', () => req.destroy(), { once: true });
    req.on('error', (err) => (signal.aborted ? resolve(lines) : reject(err)));
    req.end();
  });
}

function summary(times: number[]): { median: number; p99: number; max: number; n: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
  return { median: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN, n: sorted.length };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** /healthz's latency idle, then while `work` runs (until it ends or `seconds` pass; it is then aborted). */
export async function healthzWhile<T>(
  baseUrl: string,
  seconds: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<{
  result: T;
  seconds: number;
  idle: ExportLoadSample['idle'];
  during: ExportLoadSample['during'];
}> {
  const url = new URL(baseUrl);
  const idle: number[] = [];
  for (let i = 0; i < 50; i++) {
    idle.push(await get(url, '/healthz', {}));
    await pause(POLL_MS);
  }
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), seconds * 1000);
  const started = performance.now();
  const running = work(stop.signal).finally(() => stop.abort());
  const during: number[] = [];
  while (!stop.signal.aborted) {
    during.push(await get(url, '/healthz', {}));
    await pause(POLL_MS);
  }
  const result = await running;
  clearTimeout(timer);
  return {
    result,
    seconds: (performance.now() - started) / 1000,
    idle: (({ median, p99, n }) => ({ median, p99, n }))(summary(idle)),
    during: summary(during),
  };
}

export async function healthzDuringExports(
  baseUrl: string,
  apiKey: string,
  slug: string,
  options: { exports: number; seconds: number },
): Promise<ExportLoadSample> {
  const url = new URL(baseUrl);
  const path = `/experiment/${slug}/results/export?format=ndjson`;
  const measured = await healthzWhile(baseUrl, options.seconds, async (signal) =>
    (
      await Promise.all(
        Array.from({ length: options.exports }, () =>
          exportLines(url, path, { 'x-api-key': apiKey }, signal),
        ),
      )
    ).reduce((a, b) => a + b, 0),
  );
  return {
    exports: options.exports,
    lines: measured.result,
    seconds: measured.seconds,
    idle: measured.idle,
    during: measured.during,
  };
}
