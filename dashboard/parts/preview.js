// Preview who enters (ADR 0038): what assign would answer one user with one context, and the clause that
// decided, from POST /experiment/:slug/preview (nothing recorded). It reads the saved rules, not the form's.
import { useState } from 'preact/hooks';
import { experimentPath } from '../api.js';
import { useSession } from '../hooks.js';
import { html } from '../html.js';
import { ErrorNote } from './common.js';
import { conditionOf } from './who-enters.js';

/** The context's text: '' is none; else a JSON object, or why it is not one yet. */
function contextOf(text) {
  const c = conditionOf(text);
  return c.error ? { error: c.error.replace('A condition', 'The context') } : { value: c.value ?? undefined };
}

export function PreviewBox({ slug }) {
  const { api } = useSession();
  const [userId, setUserId] = useState('');
  const [context, setContext] = useState('{\n  "plan": "free"\n}');
  const [answer, setAnswer] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const parsed = contextOf(context);
  const ready = userId.trim() !== '' && !parsed.error && !busy;

  const run = async () => {
    if (!ready) return;
    setBusy(true);
    setError(null);
    try {
      const body = { userId: userId.trim() };
      if (parsed.value) body.context = parsed.value;
      setAnswer(await api.post(experimentPath(slug, '/preview'), body));
    } catch (e) {
      setAnswer(null);
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  // Inside the experiment form: Enter in the user id previews instead of saving the experiment.
  const onKey = (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      run();
    }
  };
  return html`<div class="preview-box" role="group" aria-labelledby="preview-title" data-testid="preview">
    <h3 id="preview-title">Preview a user</h3>
    <p class="hint small">What assign would answer, with the saved rules (save first to try a change). Nothing is recorded.</p>
    <div class="field">
      <label for="preview-user">userId</label>
      <input id="preview-user" value=${userId} onInput=${(e) => setUserId(e.currentTarget.value)} onKeyDown=${onKey}
        autocomplete="off" spellcheck="false" placeholder="user-42" data-testid="preview-user" />
    </div>
    <div class="field">
      <label for="preview-context">Context (JSON object)</label>
      <textarea id="preview-context" rows="4" class="mono" spellcheck="false" value=${context}
        onInput=${(e) => setContext(e.currentTarget.value)} aria-invalid=${String(Boolean(parsed.error))}
        aria-describedby=${parsed.error ? 'preview-context-error' : undefined} data-testid="preview-context"></textarea>
      ${parsed.error && html`<p class="field-error" id="preview-context-error" role="alert">${parsed.error}</p>`}
    </div>
    <button type="button" onClick=${run} disabled=${!ready} data-testid="preview-run">${busy ? 'Previewing…' : 'Preview'}</button>
    <${ErrorNote} error=${error} testid="preview-error" />
    ${
      answer &&
      html`<div class="preview-answer" aria-live="polite" data-testid="preview-answer"
        data-in=${String(answer.inExperiment)} data-reason=${answer.reason ?? ''}>
        <p>
          Variant <strong class="mono" data-testid="preview-variant">${answer.variant}</strong>:${' '}
          <span class=${answer.inExperiment ? 'ok' : 'muted'} data-testid="preview-entered">
            ${answer.inExperiment ? 'in the experiment' : `not in the experiment (${answer.reason})`}
          </span>
        </p>
        <p class="small" data-testid="preview-explanation">${answer.explanation}</p>
      </div>`
    }
  </div>`;
}
