// Small shared pieces of the views: loading a resource, error lines, times.
import { html, useCallback, useEffect, useState } from '../vendor/preact-htm.js';

/** Runs `load` now and on `reload()`; `{data, error, loading, reload}`. */
export function useResource(load, deps = []) {
  const [state, setState] = useState({ data: null, error: '', loading: true });
  const reload = useCallback(() => {
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => setState({ data, error: '', loading: false }),
      (err) => setState({ data: null, error: err.message, loading: false }),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

export function ErrorLine({ error }) {
  return error ? html`<p class="error" role="alert">${error}</p>` : null;
}

export function when(ts) {
  return ts ? new Date(ts).toLocaleString() : '';
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
