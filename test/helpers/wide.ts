// A wide experiment: many variants × many metric names, a few results each, the values spread over a
// declared segment key. Its analyses are slow enough (about a second) to show where they run.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { RuntimeOptions } from '../../src/runtime.js';
import {
  type Api,
  makeTempDir,
  removeTempDir,
  startTestRuntime,
  type TestRuntime,
  uniqueSlug,
} from './app.js';
import { parsePrometheus } from './prometheus.js';

export interface Wide {
  slug: string;
  variants: number;
  metrics: number;
  values: string[];
}

export async function wideExperiment(api: Api, variants = 25, metrics = 200, perVariant = 6): Promise<Wide> {
  const slug = uniqueSlug('wide');
  const values = ['v0', 'v1', 'v2', 'v3', 'v4', 'v5'];
  const share = Math.floor(100 / variants);
  const declared = Array.from({ length: variants }, (_, i) => ({
    key: `v${i}`,
    payload: { prompt: `p${i}` },
    trafficPercent: i < variants - 1 ? share : 100 - share * (variants - 1),
  }));
  const created = await api.call({
    method: 'POST',
    url: '/experiments',
    body: { slug, name: slug, variants: declared, segments: ['s'], status: 'running' },
  });
  assert.equal(created.statusCode, 201, created.body);
  let results: unknown[] = [];
  const flush = async () => {
    const res = await api.call({ method: 'POST', url: `/experiment/${slug}/logs`, body: { results } });
    assert.equal(res.statusCode, 200, res.body);
    results = [];
  };
  for (let r = 0; r < perVariant; r++) {
    for (let v = 0; v < variants; v++) {
      const values_: Record<string, number> = {};
      for (let m = 0; m < metrics; m++) values_[`m${m}`] = ((v * 7 + m * 13 + r * 31) % 97) / 10;
      results.push({
        variantKey: `v${v}`,
        metrics: values_,
        context: { s: values[(v + r) % values.length] },
      });
      if (results.length === 50) await flush();
    }
  }
  if (results.length > 0) await flush();
  return { slug, variants, metrics, values };
}

export interface WideSuite {
  readonly runtime: TestRuntime;
  readonly api: Api;
  readonly wide: Wide;
  /** agentsplit_analyses_total{outcome} now. */
  counted(outcome: string): Promise<number>;
}

/** Registers before/after hooks: a runtime with these analysis options, and a wide experiment in it. */
export function wideSuite(name: string, analysis: RuntimeOptions['analysis']): WideSuite {
  let dir: string;
  let runtime: TestRuntime | undefined;
  let wide: Wide | undefined;
  before(async () => {
    dir = makeTempDir();
    runtime = await startTestRuntime(dir, name, { analysis });
    wide = await wideExperiment(runtime.api);
  });
  after(async () => {
    await runtime?.close();
    removeTempDir(dir);
  });
  const suite: WideSuite = {
    get runtime() {
      return runtime!;
    },
    get api() {
      return runtime!.api;
    },
    get wide() {
      return wide!;
    },
    counted: async (outcome) => {
      const res = await suite.api.call({ method: 'GET', url: '/metrics' });
      return parsePrometheus(res.body).value('agentsplit_analyses_total', { outcome }) ?? 0;
    },
  };
  return suite;
}
