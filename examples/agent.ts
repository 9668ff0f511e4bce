// An agent loop with agentsplit: two system prompts, ~200 users, each run tracked, late feedback, and the
// verdict at the end. The "model" is a stand-in function (no network besides the agentsplit server).
//
//   AGENTSPLIT_URL=http://127.0.0.1:3000 AGENTSPLIT_API_KEY=<root key> node --import tsx examples/agent.ts
//
// Options (environment): AGENTSPLIT_EXPERIMENT (slug, default support-prompt-demo), AGENTSPLIT_USERS
// (default 200), AGENTSPLIT_LOCAL=1 to assign in-process from the definitions.
import { AgentSplit, AgentSplitError } from '../clients/js/src/index.js';

interface Prompt {
  prompt: string;
}

const baseUrl = (process.env.AGENTSPLIT_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
const apiKey = process.env.AGENTSPLIT_API_KEY ?? '';
const slug = process.env.AGENTSPLIT_EXPERIMENT ?? 'support-prompt-demo';
const users = Number(process.env.AGENTSPLIT_USERS ?? 200);
const local = process.env.AGENTSPLIT_LOCAL === '1';

const PROMPTS = {
  A: 'You are a helpful assistant.',
  B: 'Answer in two sentences, then offer one next step.',
};

/** Management and reading (create, start, the verdict) through the client: these throw AgentSplitError. */
const admin = new AgentSplit({ baseUrl, apiKey, flushOnExit: false });

/** Creates the experiment, or reuses it (and starts it again if it is paused or a draft). */
async function ensureExperiment(): Promise<void> {
  try {
    await admin.createExperiment({
      slug,
      name: 'Support prompt (demo)',
      status: 'running',
      assignment: 'sticky',
      variants: [
        { key: 'A', trafficPercent: 50, payload: { prompt: PROMPTS.A } },
        { key: 'B', trafficPercent: 50, payload: { prompt: PROMPTS.B } },
      ],
      metrics: [
        { name: 'success', direction: 'increase', role: 'primary' },
        { name: 'cost_usd', direction: 'decrease', role: 'guardrail' },
        { name: 'latency_ms', direction: 'decrease', role: 'secondary' },
        { name: 'thumbs_up', direction: 'increase', role: 'secondary' },
      ],
    });
    console.log(`created experiment ${slug}`);
    return;
  } catch (err) {
    if (!(err instanceof AgentSplitError) || err.status !== 409) throw err;
  }
  if ((await admin.getExperiment(slug)).status !== 'running') {
    await admin.updateExperiment(slug, { status: 'running' });
  }
  console.log(`reusing experiment ${slug}`);
}

/** A deterministic stand-in for the model: the concise prompt succeeds more often and costs less. */
function fakeScore(userId: string, salt: number): number {
  let h = 0x811c9dc5 ^ salt;
  for (let i = 0; i < userId.length; i++) h = Math.imul(h ^ userId.charCodeAt(i), 0x01000193);
  return (h >>> 0) / 2 ** 32;
}

async function model(prompt: string, question: string, userId: string) {
  const concise = prompt === PROMPTS.B;
  if (fakeScore(userId, 3) < 0.03) throw new Error('model timed out'); // 3% of calls fail
  await new Promise((r) => setTimeout(r, 1 + Math.floor(fakeScore(userId, 5) * 3)));
  const success = fakeScore(userId, 7) < (concise ? 0.72 : 0.5);
  const tokens = Math.round((concise ? 90 : 140) + fakeScore(userId, 11) * 60);
  return {
    answer: success ? `Here is how to fix "${question}".` : 'I am not sure.',
    success,
    tokens,
    cost_usd: tokens * 0.000015,
  };
}

async function main(): Promise<number> {
  if (!apiKey) {
    console.error('set AGENTSPLIT_API_KEY (the root key, to create the experiment)');
    return 2;
  }
  await ensureExperiment();
  const client = new AgentSplit<Prompt>({ baseUrl, apiKey, timeoutMs: 2000, local });
  const fallback = { prompt: PROMPTS.A };
  const sources: Record<string, number> = {};
  let failures = 0;

  for (let i = 0; i < users; i++) {
    const userId = `demo-user-${i}`;
    const question = `order ${1000 + i} has not arrived`;
    const a = await client.assign(slug, userId, {
      context: { plan: i % 3 === 0 ? 'pro' : 'free' },
      default: fallback,
    });
    sources[a.source] = (sources[a.source] ?? 0) + 1;

    let success = false;
    if (i % 2 === 0) {
      // track: times the run, records error=true and re-throws if the model throws.
      try {
        const out = await client.track(
          a,
          async (run) => {
            const r = await model(a.payload.prompt, question, userId);
            run.output = { answer: r.answer };
            run.metrics.success = r.success;
            run.metrics.tokens = r.tokens;
            run.metrics.cost_usd = r.cost_usd;
            return r;
          },
          { input: { question } },
        );
        success = out.success;
      } catch {
        failures++;
      }
    } else {
      // log: the same by hand, for code that measures its own runs.
      const t0 = performance.now();
      try {
        const r = await model(a.payload.prompt, question, userId);
        success = r.success;
        client.log(slug, {
          variantKey: a.variant,
          assignmentId: a.assignmentId,
          userId,
          input: { question },
          output: { answer: r.answer },
          metrics: {
            success: r.success,
            tokens: r.tokens,
            cost_usd: r.cost_usd,
            latency_ms: performance.now() - t0,
            error: false,
          },
        });
      } catch (err) {
        failures++;
        client.log(slug, {
          variantKey: a.variant,
          assignmentId: a.assignmentId,
          userId,
          input: { question },
          output: { error: (err as Error).message },
          metrics: { error: true, latency_ms: performance.now() - t0 },
        });
      }
    }
    // A thumbs-up a moment later, by the assignment id.
    client.feedback(slug, {
      assignmentId: a.assignmentId,
      metrics: { thumbs_up: success && fakeScore(userId, 13) < 0.9 },
    });
  }

  const delivered = await client.flush();
  const stats = client.stats();
  await client.close();
  console.log(
    `${users} users (${Object.entries(sources)
      .map(([s, n]) => `${n} ${s}`)
      .join(
        ', ',
      )}), ${failures} model failures; delivered ${stats.delivered}, failed ${stats.failed}, dropped ${stats.dropped}${delivered ? '' : ' (flush timed out)'}`,
  );

  const { verdict, exposures, results } = await admin.analysis(slug);
  await admin.close();
  console.log(`exposures ${JSON.stringify(exposures)}, results ${JSON.stringify(results)}`);
  console.log(
    `verdict: ${verdict.status}${verdict.variant ? ` (${verdict.variant})` : ''} — ${verdict.summary}`,
  );
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  },
);
