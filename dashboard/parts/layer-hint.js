// What a layer holds while its key is typed (GET /layers/:key): the other experiments using it and the
// ranges no other running experiment takes, so a range can be chosen before the server's 409 says so.
import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../hooks.js';
import { html } from '../html.js';

// The server's rule for a layer key: anything else would only earn a 400 (and a console error).
const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const shown = (r) => `[${r[0]}, ${r[1]})`;

/** The parts of [0, 1) the `taken` ranges leave (src/core/layers.ts freeRanges). */
function freeRanges(taken) {
  const free = [];
  let at = 0;
  for (const [start, end] of [...taken].sort((a, b) => a[0] - b[0])) {
    if (start > at) free.push([at, start]);
    at = Math.max(at, end);
  }
  if (at < 1) free.push([at, 1]);
  return free;
}

export function LayerHint({ layerKey, slug }) {
  const { api } = useSession();
  const [layer, setLayer] = useState(null);
  const key = layerKey.trim();
  useEffect(() => {
    setLayer(null);
    if (!KEY.test(key)) return undefined;
    let live = true;
    // Waits for a pause in typing: one request per key, not per keystroke.
    const timer = setTimeout(() => {
      api.get(`/layers/${encodeURIComponent(key)}`).then(
        (answer) => live && setLayer(answer),
        () => live && setLayer(null),
      );
    }, 300);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key]);
  if (!layer || layer.key !== key) return null;
  const others = layer.experiments.filter((e) => e.experiment !== slug);
  if (others.length === 0) {
    return html`<p class="hint small" data-testid="layer-hint">No other experiment uses layer ${key}.</p>`;
  }
  const free = freeRanges(others.filter((e) => e.status === 'running').map((e) => e.range));
  return html`<p class="hint small" data-testid="layer-hint">
    Layer ${key}: ${others.map((e) => `${e.experiment} (${e.status}) ${shown(e.range)}`).join(', ')}; free for a
    running experiment: ${free.length ? free.map(shown).join(', ') : 'none'}.
  </p>`;
}
