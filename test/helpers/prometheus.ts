// Reads the Prometheus text format (0.0.4) strictly enough to catch a malformed exposition: every line
// is a # HELP, a # TYPE or a sample, every sample belongs to a family declared by a # TYPE line.
import assert from 'node:assert/strict';

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name → type (counter, gauge, histogram, summary, untyped). */
  types: Map<string, string>;
  samples: PromSample[];
  /** The value of the one sample named `name` whose labels include `labels`; undefined when none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample named `name` whose labels include `labels`. */
  find(name: string, labels?: Record<string, string>): PromSample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const HELP_LINE = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE_LINE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
// Go's ParseFloat, which Prometheus parses values with, takes NaN and Inf in any case (prom-client
// writes NaN as `Nan`, e.g. the event-loop lag mean before its first sample).
const VALUE = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf|nan)$/i;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    assert.ok(m, `labels do not parse: ${line}`);
    labels[m[1]!] = m[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/** The family a sample belongs to: a histogram's _bucket/_sum/_count samples belong to the histogram. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  const type = types.get(base);
  return type === 'histogram' || type === 'summary' ? base : undefined;
}

export function parsePrometheus(text: string): Exposition {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  const types = new Map<string, string>();
  const samples: PromSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      assert.match(line, HELP_LINE);
      continue;
    }
    if (line.startsWith('#')) {
      const m = TYPE_LINE.exec(line);
      assert.ok(m, `not a # TYPE line: ${line}`);
      assert.ok(!types.has(m[1]!), `${m[1]} is typed twice`);
      types.set(m[1]!, m[2]!);
      continue;
    }
    const m = SAMPLE_LINE.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const [, name, labelText, value] = m;
    assert.match(value!, VALUE, `not a sample value: ${line}`);
    assert.ok(familyOf(name!, types), `sample of no # TYPE'd family: ${line}`);
    samples.push({
      name: name!,
      labels: labelText ? parseLabels(labelText, line) : {},
      value: /nan/i.test(value!) ? Number.NaN : Number(value!.replace(/inf$/i, 'Infinity')),
    });
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    types,
    samples,
    find,
    value(name, labels) {
      const found = find(name, labels);
      assert.ok(found.length <= 1, `${found.length} samples of ${name} ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
  };
}
