// A session's key/value entries: the keys (values only when asked: a page of values can be
// large), a form to set one, and a delete per key.
import { html } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { ErrorLine, useAction } from '../lib/ui.js';

const keyPath = (sessionId, key) => `/v1/sessions/${sessionId}/storage/keys/${encodeURIComponent(key)}`;

export function KvPanel({ sessionId, res, showValues, onShowValues }) {
  const { message, error, run } = useAction(res.reload, { notFound: 'That key' });

  const save = (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const key = String(f.get('key'));
    return run('Not saved', async () => {
      await api('PUT', keyPath(sessionId, key), { body: { value: String(f.get('value')) } });
      form.reset();
      return `Saved ${key}.`;
    });
  };
  const remove = (key) => confirm(`Delete the key "${key}"?`) && run('Not deleted', async () => (await api('DELETE', keyPath(sessionId, key)), `Deleted ${key}.`));

  const entries = res.data?.data ?? [];
  return html`
    <label class="inline"><input type="checkbox" checked=${showValues} onChange=${(e) => onShowValues(e.currentTarget.checked)} /> show values</label>
    ${res.data && entries.length === 0 && html`<p class="muted">No keys yet.</p>`}
    <ul class="plain kv">
      ${entries.map((k) => html`
        <li key=${k.key} data-key=${k.key}>
          <code>${k.key}</code>${showValues && html` = <code class="value">${k.value}</code>`}
          <button type="button" class="link" onClick=${() => remove(k.key)} aria-label=${`Delete ${k.key}`}>delete</button>
        </li>`)}
    </ul>
    ${res.data?.total > entries.length && html`<p class="muted">${entries.length} of ${res.data.total} shown.</p>`}
    <form class="stack" onSubmit=${save} data-testid="kv-form">
      <label>Key <input name="key" required maxlength="256" autocomplete="off" /></label>
      <label>Value <textarea name="value" rows="2"></textarea></label>
      <button type="submit">Save entry</button>
      <span class="ok" role="status">${message}</span>
    </form>
    <${ErrorLine} error=${error} />
  `;
}
