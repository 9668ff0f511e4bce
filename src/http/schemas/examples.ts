// The OpenAPI document's examples. They tell one story, the README's: a prompt experiment, one user
// assigned and one result logged.
export const VARIANT_A = {
  key: 'A',
  payload: { prompt: 'You are a helpful assistant.' },
  trafficPercent: 50,
};
export const VARIANT_B = {
  key: 'B',
  payload: { prompt: 'You are a concise assistant.' },
  trafficPercent: 50,
};
export const EXPERIMENT_EXAMPLE = {
  slug: 'checkout-prompt',
  name: 'Checkout prompt',
  description: 'Does a concise prompt answer as well, for less?',
  status: 'running',
  active: true,
  assignment: 'random',
  seed: 'checkout-prompt',
  variants: [VARIANT_A, VARIANT_B],
  metrics: [],
  segments: [],
  guardrailAction: 'notify',
  minimumUnits: 100,
  decision: null,
  releasedVariant: null,
  targeting: null,
  coverage: 100,
  layer: null,
  overrides: [],
  defaultVariant: null,
  version: 1,
  createdAt: '2025-06-02T09:14:03.512Z',
  updatedAt: '2025-06-02T09:14:03.512Z',
};
export const ASSIGNMENT_ID = '01972ff0-f582-7a3c-9e41-52b8c6d0e7f3.1.1.dXNlci00Mg==.65958bf8';
export const LOG_ID = '01972ff0-fa54-7d12-8b6e-0c4f9a2e31d8';
export const METRICS_EXAMPLE = { latency_ms: 812, tokens: 153, cost_usd: 0.0021, rating: 5 };
export const LOG_EXAMPLE = {
  variantKey: 'B',
  userId: 'user-42',
  assignmentId: ASSIGNMENT_ID,
  input: { question: 'Where is my order?' },
  output: { answer: 'It ships today.' },
  metrics: METRICS_EXAMPLE,
  context: { plan: 'pro' },
  timestamp: '2025-06-02T09:20:11.200Z',
};
export const RESULT_EXAMPLE = {
  logId: LOG_ID,
  variantKey: 'B',
  knownVariant: true,
  userId: 'user-42',
  assignmentId: ASSIGNMENT_ID,
  assignedVariant: null,
  input: LOG_EXAMPLE.input,
  output: LOG_EXAMPLE.output,
  metrics: METRICS_EXAMPLE,
  context: LOG_EXAMPLE.context,
  timestamp: LOG_EXAMPLE.timestamp,
  createdAt: '2025-06-02T09:20:11.348Z',
  experimentVersion: 1,
  feedback: { thumbs_up: true },
  assignmentContext: { plan: 'pro' },
  comments: [{ text: 'Clear answer, but too long', at: '2025-06-02T10:31:05.000Z' }],
};
