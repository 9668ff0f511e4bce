// Variants with their weights and payloads, and what changed between two versions of them.
import { useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { formatTime } from '../format.js';
import { useLoad, useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote, Json } from './common.js';
import { ExposedCount, exposedOf } from './exposed.js';

/** Each variant's weight and payload and, once the analysis is in, what it exposed. */
export function VariantCards({ experiment, analysis }) {
  const exposed = analysis && exposedOf(analysis);
  return html`<ul class="variant-cards" data-testid="variants">
    ${experiment.variants.map(
      (v) => html`<li class="variant-card" data-testid=${`variant-${v.key}`}>
        <div class="variant-top">
          <strong class="mono">${v.key}</strong>
          <span data-testid="weight">${v.trafficPercent}%</span>
        </div>
        <div class="weight-track" aria-hidden="true">
          <div class="weight-fill" style=${{ width: `${v.trafficPercent}%` }}></div>
        </div>
        ${
          exposed &&
          html`<p class="muted small">Exposed: <${ExposedCount}
            unit=${exposed.unit} units=${exposed.counts[v.key] ?? 0} calls=${analysis.exposures[v.key] ?? 0}
            testid="variant-exposed" callsTestid="variant-exposures" /></p>`
        }
        <${Json} value=${v.payload} label=${`Payload of ${v.key}`} />
      </li>`,
    )}
  </ul>`;
}

/** Leaves of a JSON value by path: {"a":{"b":1}} → Map { 'a.b' => '1' }. */
function leaves(value, path = '', out = new Map()) {
  if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) {
      leaves(v, Array.isArray(value) ? `${path}[${k}]` : path ? `${path}.${k}` : k, out);
    }
  } else {
    out.set(path || '(payload)', JSON.stringify(value));
  }
  return out;
}

/** Each change from `before` to `after`: variants added or removed, weights, payload fields. */
export function diffVariants(before, after) {
  const changes = [];
  const old = new Map(before.map((v) => [v.key, v]));
  const now = new Map(after.map((v) => [v.key, v]));
  for (const v of before) if (!now.has(v.key)) changes.push({ key: v.key, what: 'variant removed' });
  for (const v of after) {
    const was = old.get(v.key);
    if (!was) {
      changes.push({
        key: v.key,
        what: 'variant added',
        after: `${v.trafficPercent}% ${JSON.stringify(v.payload)}`,
      });
      continue;
    }
    if (was.trafficPercent !== v.trafficPercent) {
      changes.push({
        key: v.key,
        what: 'weight',
        before: `${was.trafficPercent}%`,
        after: `${v.trafficPercent}%`,
      });
    }
    const a = leaves(was.payload);
    const b = leaves(v.payload);
    for (const [path, value] of a) {
      if (!b.has(path)) changes.push({ key: v.key, what: `payload.${path}`, before: value });
      else if (b.get(path) !== value)
        changes.push({ key: v.key, what: `payload.${path}`, before: value, after: b.get(path) });
    }
    for (const [path, value] of b)
      if (!a.has(path)) changes.push({ key: v.key, what: `payload.${path}`, after: value });
  }
  return changes;
}

function VersionDiff({ versions }) {
  const last = versions.length - 1;
  const [from, setFrom] = useState(versions[last - 1].version);
  const [to, setTo] = useState(versions[last].version);
  const pick = (n) => versions.find((v) => v.version === Number(n));
  const a = pick(from);
  const b = pick(to);
  const changes = a && b ? diffVariants(a.variants, b.variants) : [];
  const options = versions.map(
    (v) => html`<option value=${v.version}>v${v.version} · ${formatTime(v.createdAt)}</option>`,
  );
  return html`<div class="version-diff" data-testid="version-diff">
    <div class="toolbar">
      <label class="field inline"
        ><span>From</span
        ><select value=${from} onChange=${(e) => setFrom(Number(e.currentTarget.value))} data-testid="diff-from">
          ${options}
        </select></label
      >
      <label class="field inline"
        ><span>To</span
        ><select value=${to} onChange=${(e) => setTo(Number(e.currentTarget.value))} data-testid="diff-to">
          ${options}
        </select></label
      >
    </div>
    ${
      changes.length === 0
        ? html`<p class="muted">No difference between these versions.</p>`
        : html`<ul class="changes">
            ${changes.map(
              (c) => html`<li data-testid="diff-change">
                <span class="mono strong">${c.key}</span> <span class="muted">${c.what}</span>
                ${c.before !== undefined && html`<del class="mono">${c.before}</del>`}
                ${c.after !== undefined && html`<ins class="mono">${c.after}</ins>`}
              </li>`,
            )}
          </ul>`
    }
  </div>`;
}

export function Versions({ experiment }) {
  const { api } = useSession();
  const { data, error } = useLoad(
    () => api.get(experimentPath(experiment.slug, '/versions')),
    [experiment.slug, experiment.version],
  );
  if (experiment.version < 2)
    return html`<p class="muted small">One version so far: the variants never changed.</p>`;
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!data || data.versions.length < 2) return null;
  return html`<${VersionDiff} key=${data.versions.length} versions=${data.versions} />`;
}
