// A result read from an OpenTelemetry trace (issue 39) on the results page, in headless Chromium against a
// real server: a run posted to /v1/traces as OTLP JSON (its spans out of order in the body) shows its
// trace id (copied by its button), models and span count, and its spans in start order, each indented under
// its parent, with its duration as text and as a bar placed in the run, its tokens, and the failed tool
// span marked in words and in the error colour. Exported in two parts (the root first), the result has no
// input or output of its own: the trace's messages stand in for them. At 390 px nothing is wider than the
// screen.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  assertNoConsoleErrors,
  assertNoOverflow,
  openDashboard,
  screenshot,
  waitUntil,
} from './helpers/browser.js';
import { dashboardRun } from './helpers/dashboard-run.js';

const API_KEY = 'ui-traces-root-key-0123456789abcdef';
const SLUG = 'traced-agent';
const ui = dashboardRun(API_KEY, { setup: setUp });
const call = ui.call;

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const QUESTION = 'Where is my order 1234?';
const ANSWER = 'It ships tomorrow.';

/** One span of the run: offsets in ms from the run's start, attributes as OTLP key/values. */
interface SpanSpec {
  id: string;
  parent: string | null;
  name: string;
  from: number;
  to: number;
  attributes: Record<string, string | number>;
  error?: boolean;
}

// The run as the page must show it, in start order: root, first chat, the failed tool with the HTTP call
// it made (two levels down), the second chat.
const SPANS: SpanSpec[] = [
  {
    id: '00f067aa0ba902b1',
    parent: null,
    name: 'invoke_agent support-bot',
    from: 0,
    to: 800,
    attributes: { 'gen_ai.operation.name': 'invoke_agent' },
  },
  {
    id: '00f067aa0ba902b2',
    parent: '00f067aa0ba902b1',
    name: 'chat gpt-4o',
    from: 10,
    to: 410,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 80,
      'gen_ai.input.messages': JSON.stringify([
        { role: 'user', parts: [{ type: 'text', content: QUESTION }] },
      ]),
    },
  },
  {
    id: '00f067aa0ba902b3',
    parent: '00f067aa0ba902b1',
    name: 'execute_tool track_order',
    from: 420,
    to: 470,
    attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'track_order' },
    error: true,
  },
  {
    id: '00f067aa0ba902b4',
    parent: '00f067aa0ba902b3',
    name: 'GET /orders/1234',
    from: 425,
    to: 465,
    attributes: { 'http.request.method': 'GET' },
  },
  {
    id: '00f067aa0ba902b5',
    parent: '00f067aa0ba902b1',
    name: 'chat gpt-4o-mini',
    from: 480,
    to: 780,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': 300,
      'gen_ai.usage.output_tokens': 40,
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: ANSWER }] },
      ]),
    },
  },
];

let logId: string;

function otlpBody(specs: SpanSpec[], assignmentId: string, at: number): unknown {
  const nanos = (ms: number) => (BigInt(at + ms) * 1_000_000n).toString();
  const value = (v: string | number) =>
    typeof v === 'number' ? { intValue: String(v) } : { stringValue: v };
  // Out of start order in the body: the page orders them.
  const spans = [...specs].reverse().map((s) => ({
    traceId: TRACE_ID,
    spanId: s.id,
    ...(s.parent === null ? {} : { parentSpanId: s.parent }),
    name: s.name,
    kind: s.parent === null ? 1 : 3,
    startTimeUnixNano: nanos(s.from),
    endTimeUnixNano: nanos(s.to),
    attributes: Object.entries({
      ...s.attributes,
      ...(s.parent === null ? { 'agentsplit.assignment_id': assignmentId } : {}),
    }).map(([key, v]) => ({ key, value: value(v) })),
    status: s.error ? { code: 2, message: 'timeout' } : { code: 1 },
  }));
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-agent' } }] },
        scopeSpans: [{ scope: { name: 'support-agent', version: '1.0.0' }, spans }],
      },
    ],
  };
}

async function setUp(): Promise<void> {
  await call('POST', '/experiments', {
    slug: SLUG,
    name: 'A traced support agent',
    status: 'running',
    variants: [
      { key: 'big', payload: { model: 'gpt-4o' }, trafficPercent: 50 },
      { key: 'small', payload: { model: 'gpt-4o-mini' }, trafficPercent: 50 },
    ],
    metrics: [{ name: 'latency_ms', direction: 'decrease', role: 'primary' }],
  });
  // A result logged the usual way too: it shows no trace.
  const plain = await call('POST', `/experiment/${SLUG}/assign`, { userId: 'plain-user' });
  await call('POST', `/experiment/${SLUG}/log`, {
    variantKey: plain.variant,
    userId: 'plain-user',
    assignmentId: plain.assignmentId,
    input: { question: 'Hello?' },
    output: { answer: 'Hi.' },
  });
  // The run in two exports, the root first: its result is written then, with no input or output; the
  // model calls' messages arrive with the second export, in the trace only.
  const a = await call('POST', `/experiment/${SLUG}/assign`, { userId: 'traced-user' });
  const at = Date.now() - 2000;
  await call('POST', '/v1/traces', otlpBody(SPANS.slice(0, 1), a.assignmentId, at));
  await call('POST', '/v1/traces', otlpBody(SPANS.slice(1), a.assignmentId, at));
  for (let tries = 0; ; tries++) {
    const { results } = await call('GET', `/experiment/${SLUG}/results?limit=100`);
    const traced = results.find((r: { trace?: unknown }) => r.trace);
    if (traced?.trace.spanCount === SPANS.length) {
      assert.equal(traced.trace.traceId, TRACE_ID);
      assert.ok(traced.trace.input && traced.trace.output, 'the trace has the messages');
      assert.equal(traced.input, null, 'a traced result has no input of its own');
      logId = traced.logId;
      break;
    }
    assert.ok(tries < 100, 'the traced run never became a result');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Opens the results page at `width`, waits for the traced row and opens its details. */
async function openTraced(width: number): Promise<Page> {
  const page = await openDashboard(ui.browser, ui.base, {
    key: API_KEY,
    width,
    hash: `#/experiment/${SLUG}/results`,
  });
  const row = page.locator(`[data-testid="result-row"][data-log-id="${logId}"]`);
  await row.waitFor();
  assert.equal((await row.getByTestId('result-trace-chip').innerText()).trim(), 'trace · 5 spans');
  await row.getByTestId('expand-result').click();
  await page.getByTestId('result-trace').waitFor();
  return page;
}

describe('a result read from a trace on the results page', () => {
  test('shows its trace id, models, and its spans as an indented mini waterfall with the error marked', async () => {
    const page = await openTraced(1280);
    try {
      const trace = page.getByTestId('result-trace');
      assert.equal((await trace.getByTestId('trace-id').innerText()).trim(), TRACE_ID);
      assert.equal((await trace.getByTestId('trace-models').innerText()).trim(), 'gpt-4o, gpt-4o-mini');
      assert.equal((await trace.getByTestId('trace-span-count').innerText()).trim(), '5, 1 failed');
      // A heading names the section; the spans are a table with column headers.
      assert.equal(await page.getByRole('heading', { name: 'Trace', exact: true }).count(), 1);
      const table = trace.getByTestId('trace-spans');
      assert.deepEqual(
        (await table.locator('thead th').allTextContents()).map((t) => t.trim()),
        ['Span', 'Operation', 'Model', 'Time', 'Tokens', 'Status'],
      );

      // The copy button puts the trace id on the clipboard.
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.base });
      await trace.getByTestId('trace-copy').click();
      await waitUntil(
        page,
        async () => (await trace.getByTestId('trace-copied').innerText()).trim() === 'Copied.',
        'the trace id copied',
      );
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), TRACE_ID);

      // One row per span, in start order, each as deep as its parent chain.
      const rows = trace.getByTestId('trace-span');
      assert.deepEqual(
        (await rows.getByTestId('span-name').allInnerTexts()).map((t) => t.trim()),
        SPANS.map((s) => s.name),
      );
      const depths = await rows.evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-depth'))));
      assert.deepEqual(depths, [0, 1, 1, 2, 1]);
      // Indented: a child's name starts right of its parent's, a grandchild's further still.
      const lefts = await rows
        .getByTestId('span-name')
        .evaluateAll((ns) => ns.map((n) => n.getBoundingClientRect().left));
      assert.ok(lefts[1]! > lefts[0]! + 8, `child at ${lefts[1]} px, root at ${lefts[0]} px`);
      assert.ok(lefts[3]! > lefts[2]! + 8, `grandchild at ${lefts[3]} px, its parent at ${lefts[2]} px`);
      assert.equal(lefts[1], lefts[2], 'siblings line up');

      // Durations as text, and bars placed by start and duration within the root's 800 ms.
      assert.deepEqual(
        (await rows.getByTestId('span-duration').allInnerTexts()).map((t) => t.trim()),
        SPANS.map((s) => `${s.to - s.from} ms`),
      );
      const labels = await rows
        .getByTestId('span-bar')
        .evaluateAll((bs) => bs.map((b) => [b.getAttribute('role'), b.getAttribute('aria-label')]));
      assert.deepEqual(
        labels,
        SPANS.map((s) => ['img', `from ${s.from} ms to ${s.to} ms of 800 ms`]),
      );
      const boxes = async (selector: string) =>
        rows
          .locator(selector)
          .evaluateAll((es) =>
            es.map((e) => [e.getBoundingClientRect().left, e.getBoundingClientRect().width]),
          );
      const tracks = await boxes('.span-track');
      const bars = await boxes('.span-bar');
      const geometry = tracks.map(([x, w], i) => [(bars[i]![0]! - x!) / w!, bars[i]![1]! / w!]);
      SPANS.forEach((s, i) => {
        const [left, width] = geometry[i]!;
        assert.ok(Math.abs(left! - s.from / 800) < 0.02, `${s.name} starts at ${left} of the run`);
        assert.ok(Math.abs(width! - (s.to - s.from) / 800) < 0.02, `${s.name} is ${width} of the run`);
      });

      // Tokens where the span has them.
      assert.deepEqual(
        (await rows.getByTestId('span-tokens').allInnerTexts()).map((t) => t.trim()),
        ['—', '1,200 in · 80 out', '—', '—', '300 in · 40 out'],
      );

      // The failed tool span: the word "error" in the error colour, its bar too; the others say ok.
      assert.deepEqual(
        (await rows.getByTestId('span-status').allInnerTexts()).map((t) => t.trim()),
        ['ok', 'ok', 'error', 'ok', 'ok'],
      );
      const failed = rows.nth(2);
      assert.equal(await failed.getAttribute('data-error'), 'true');
      const [bad, chip, bar] = (await page.evaluate(`(() => {
        const row = document.querySelector('[data-testid="trace-span"][data-error="true"]');
        return [
          getComputedStyle(document.documentElement).getPropertyValue('--bad').trim(),
          getComputedStyle(row.querySelector('.chip')).color,
          getComputedStyle(row.querySelector('.span-bar')).backgroundColor,
        ];
      })()`)) as [string, string, string];
      assert.equal(bad, '#b91c1c');
      assert.equal(chip, 'rgb(185, 28, 28)');
      assert.equal(bar, 'rgb(185, 28, 28)');

      // The trace's messages stand in for the result's own input and output, pretty-printed.
      const row = page.locator(`[data-testid="result-row"][data-log-id="${logId}"]`);
      assert.equal(await row.getByTestId('from-trace').count(), 2);
      const detail = page.getByTestId('result-detail');
      const input = await detail.getByLabel('Input', { exact: true }).innerText();
      assert.ok(input.includes(`"content": "${QUESTION}"`), input);
      assert.match(input, /\n {2}\{\n {4}"role": "user"/, 'indented JSON');
      assert.ok((await detail.getByLabel('Output', { exact: true }).innerText()).includes(ANSWER));
      assert.match(await detail.innerText(), /Input \(from the trace\)/);

      // The result logged without a trace shows none.
      const plain = page.locator(`[data-testid="result-row"]:not([data-log-id="${logId}"])`);
      assert.equal(await plain.count(), 1);
      assert.equal(await plain.getByTestId('result-trace-chip').count(), 0);
      await screenshot(page, 'traces-result-1280');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });

  test('fits 390 px: nothing overflows sideways, each span row within the screen', async () => {
    const page = await openTraced(390);
    try {
      const rows = page.getByTestId('trace-span');
      assert.equal(await rows.count(), SPANS.length);
      assert.deepEqual(
        (await rows.getByTestId('span-duration').allInnerTexts()).map((t) => t.trim()),
        SPANS.map((s) => `${s.to - s.from} ms`),
      );
      await assertNoOverflow(page, 'results with a trace at 390 px');
      const rights = (await page.evaluate(`[...document.querySelectorAll(
        '[data-testid="result-trace"], [data-testid="result-trace"] *')].map((e) => e.getBoundingClientRect().right)`)) as number[];
      const widest = Math.max(...rights);
      assert.ok(widest <= 390, `the trace reaches ${widest} px in a 390 px screen`);
      // The bars are still bars: each track as wide as most of the screen.
      const widths = await rows
        .getByTestId('span-bar')
        .evaluateAll((ts) => ts.map((t) => t.getBoundingClientRect().width));
      for (const w of widths) assert.ok(w > 200, `a ${w} px track`);
      await screenshot(page, 'traces-result-390');
      assertNoConsoleErrors(page);
    } finally {
      await page.context().close();
    }
  });
});
