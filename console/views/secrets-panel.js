// A session's secret names with a delete each, and a form to add or replace one. The value goes out once, in the
// PUT body; the service never returns it, and the field is cleared after saving.
import { html } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { ErrorLine, useAction } from '../lib/ui.js';

export function SecretsPanel({ sessionId, res }) {
  const { message, error, run } = useAction(res.reload);

  const save = (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const name = String(f.get('name')).trim();
    const hosts = String(f.get('allowed_hosts') ?? '')
      .split(/[\s,]+/)
      .filter(Boolean);
    const value = String(f.get('value'));
    return run('Not saved', async () => {
      await api('PUT', `/v1/sessions/${sessionId}/storage/secrets`, { body: { secrets: { [name]: hosts.length ? { value, allowed_hosts: hosts } : value } } });
      form.reset();
      return `Saved the secret ${name}.`;
    });
  };

  const remove = (name) =>
    confirm(`Delete the secret "${name}"?`) &&
    run('Not deleted', async () => (await api('DELETE', `/v1/sessions/${sessionId}/storage/secrets/${encodeURIComponent(name)}`), `Deleted ${name}.`));

  const names = res.data?.data ?? [];
  return html`
    ${res.data && names.length === 0 && html`<p class="muted">No secrets yet.</p>`}
    <ul class="plain secrets">
      ${names.map((s) => html`
        <li key=${s.name} data-name=${s.name}>
          <code>${s.name}</code>${s.allowed_hosts?.length ? html` <span class="muted">→ ${s.allowed_hosts.join(', ')}</span>` : ''}
          <button type="button" class="link" onClick=${() => remove(s.name)} aria-label=${`Delete ${s.name}`}>delete</button>
        </li>`)}
    </ul>
    <form class="stack" onSubmit=${save} data-testid="secret-form">
      <label>Secret name <input name="name" required autocomplete="off" /></label>
      <label>Value <input name="value" type="password" required autocomplete="new-password" /></label>
      <label>Allowed hosts (optional, comma separated) <input name="allowed_hosts" autocomplete="off" /></label>
      <button type="submit">Save secret</button>
      <span class="ok" role="status">${message}</span>
    </form>
    <${ErrorLine} error=${error} />
  `;
}
