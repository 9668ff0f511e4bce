// /healthz while analyses run (issue 34's frozen instance): a wide experiment (50 variants × 200 metric
// names, 6 results each: 10,000 figures an analysis) is analysed by 8 clients at once, each asking
// distinct questions (alphas) so that no answer comes from the cache, while /healthz is asked every 20 ms.
import { request } from 'node:http';
import { healthzWhile } from './export-load.js';

export interface AnalysisLoadSample {
  clients: number;
  /** Analyses answered 200, and refused 503 (busy or past the budget). */
  answered: number;
  refused: number;
  /** Each 200 analysis's time, ms. */
  analysis: { median: number; max: number };
  seconds: number;
  idle: { median: number; p99: number; n: number };
  during: { median: number; p99: number; max: number; n: number };
}

function call(
  base: URL,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; ms: number }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers: Record<string, string> = { 'x-api-key': key };
    if (payload)
      Object.assign(headers, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
      });
    const req = request(
      { host: base.hostname, port: base.port, method, path, headers, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Creates the wide experiment through the API; returns its slug. */
async function wideExperiment(base: URL, key: string, variants = 50, metrics = 200): Promise<string> {
  const slug = `wide-${Date.now()}`;
  const share = Math.floor(100 / variants);
  const created = await call(base, 'POST', '/experiments', key, {
    slug,
    name: slug,
    status: 'running',
    variants: Array.from({ length: variants }, (_, i) => ({
      key: `v${i}`,
      payload: { prompt: `p${i}` },
      trafficPercent: i < variants - 1 ? share : 100 - share * (variants - 1),
    })),
  });
  if (created.status !== 201) throw new Error(`creating ${slug}: ${created.status}`);
  for (let r = 0; r < 6; r++) {
    const results = Array.from({ length: variants }, (_, v) => ({
      variantKey: `v${v}`,
      metrics: Object.fromEntries(
        Array.from({ length: metrics }, (_, m) => [`m${m}`, ((v * 7 + m * 13 + r * 31) % 97) / 10]),
      ),
    }));
    const logged = await call(base, 'POST', `/experiment/${slug}/logs`, key, { results });
    if (logged.status !== 200) throw new Error(`logging to ${slug}: ${logged.status}`);
  }
  return slug;
}

export async function healthzDuringAnalyses(
  baseUrl: string,
  key: string,
  options: { clients: number; seconds: number },
): Promise<AnalysisLoadSample> {
  const base = new URL(baseUrl);
  const slug = await wideExperiment(base, key);
  let question = 0;
  const times: number[] = [];
  let refused = 0;
  const measured = await healthzWhile(baseUrl, options.seconds, async (signal) => {
    await Promise.all(
      Array.from({ length: options.clients }, async () => {
        while (!signal.aborted) {
          const alpha = (0.01 + (question++ % 9000) / 200_000).toFixed(6);
          const res = await call(base, 'GET', `/experiment/${slug}/analysis?alpha=${alpha}`, key);
          if (res.status === 200) times.push(res.ms);
          else refused++;
        }
      }),
    );
  });
  times.sort((a, b) => a - b);
  return {
    clients: options.clients,
    answered: times.length,
    refused,
    analysis: { median: times[Math.floor(times.length / 2)] ?? Number.NaN, max: times.at(-1) ?? Number.NaN },
    seconds: measured.seconds,
    idle: measured.idle,
    during: measured.during,
  };
}
