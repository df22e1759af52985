// Small shared pieces of the views: loading a resource, loading and error lines, the page
// title, times and sizes.
import { html, useCallback, useEffect, useState } from '../vendor/preact-htm.js';
import { humanError } from './errors.js';

/** Runs `load` now and on `reload()`; `{data, error, failure, loading, reload}` (`error` is a sentence). */
export function useResource(load, deps = [], { notFound } = {}) {
  const [state, setState] = useState({ data: null, error: '', failure: null, loading: true });
  const reload = useCallback(() => {
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => setState({ data, error: '', failure: null, loading: false }),
      (err) => setState({ data: null, error: humanError(err, { notFound }), failure: err, loading: false }),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

/**
 * A button's or form's action: `run(failedPrefix, fn)` clears the last outcome, awaits `fn` (its
 * answer is the success sentence), calls `after` (a reload), or shows "failedPrefix: <sentence>".
 */
export function useAction(after = () => {}, { notFound } = {}) {
  const [outcome, setOutcome] = useState({ message: '', error: '' });
  const run = async (failedPrefix, fn) => {
    setOutcome({ message: '', error: '' });
    try {
      const message = await fn();
      setOutcome({ message: message ?? '', error: '' });
      after();
    } catch (err) {
      setOutcome({ message: '', error: `${failedPrefix}: ${humanError(err, { notFound })}` });
    }
  };
  return { ...outcome, run };
}

export function ErrorLine({ error }) {
  return error ? html`<p class="error" role="alert">${error}</p>` : null;
}

/** Shown while the first answer of a resource is on its way. */
export function Loading({ res, what = 'Loading…' }) {
  return res.loading && !res.data ? html`<p class="loading" role="status" aria-live="polite">${what}</p>` : null;
}

/** "2 queued" beside a session: its messages waiting for a turn (nothing when none wait). */
export function QueuedCount({ n }) {
  return n > 0 ? html`<span class="badge queued-count" data-testid="queued-count">${n} queued</span>` : null;
}

/** Sets the tab's title for the view shown. */
export function useTitle(title) {
  useEffect(() => {
    document.title = title ? `${title} · Agent Session Service` : 'Agent Session Service console';
  }, [title]);
}

export function when(ts) {
  return ts ? new Date(ts).toLocaleString() : '';
}

const UNITS = ['B', 'KB', 'MB', 'GB'];
/** 1536 → "1.5 KB". */
export function formatBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '';
  let i = 0;
  let v = n;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${UNITS[i]}`;
}

/** Parses a JSON text field; throws with the field's name. */
export function parseJsonField(text, name, fallback) {
  if (!text.trim()) return fallback;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${name} is not valid JSON`);
  }
}
