// For admins: the organisation's LLM providers (keys are never returned) and models, the
// organisation default, and a model sync per provider.
import { html, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { ErrorLine, useResource, when } from '../lib/ui.js';

export function Admin({ me }) {
  const providers = useResource(() => api('GET', '/v1/llm-providers'));
  const models = useResource(() => api('GET', '/v1/llm-models'));
  const defaults = useResource(() => api('GET', '/v1/llm-models/default'));
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');

  if (me.user.role !== 'admin') return html`<p class="error">Only admins manage providers and models.</p>`;

  const sync = async (p) => {
    setError('');
    setMessage('');
    try {
      const r = await api('POST', `/v1/llm-providers/${p.id}/sync-models`);
      setMessage(`${p.name}: ${JSON.stringify(r)}`);
      providers.reload();
      models.reload();
    } catch (err) {
      setError(err.message);
    }
  };

  return html`
    <section>
      <h1>Providers and models</h1>
      <${ErrorLine} error=${providers.error || models.error || error} />
      <p class="ok">${message}</p>
      <h2>Providers</h2>
      <table data-testid="providers">
        <thead><tr><th>Name</th><th>Type</th><th>Base URL</th><th>Key</th><th>Last sync</th><th></th></tr></thead>
        <tbody>
          ${(providers.data?.data ?? []).map((p) => html`
            <tr key=${p.id}>
              <td>${p.name}</td><td>${p.provider_type}</td><td>${p.base_url ?? 'vendor default'}</td>
              <td>${p.api_key_set ? 'set' : 'none'}</td><td>${when(p.last_synced_at)}</td>
              <td><button class="secondary" onClick=${() => sync(p)}>Sync models</button></td>
            </tr>`)}
        </tbody>
      </table>
      ${providers.data?.data?.length === 0 && html`<p class="muted">No providers: turns use the system default model${defaults.data ? ` (${JSON.stringify(defaults.data)})` : ''}.</p>`}
      <h2>Models</h2>
      <table data-testid="models">
        <thead><tr><th>Model</th><th>Name</th><th>Provider</th><th>Capabilities</th><th>Enabled</th><th>Status</th></tr></thead>
        <tbody>
          ${(models.data?.data ?? []).map((m) => html`
            <tr key=${m.id}>
              <td><code>${m.model_id}</code></td><td>${m.display_name}</td><td>${m.provider_name}</td>
              <td>${m.capabilities.join(', ')}</td><td>${m.enabled ? 'yes' : 'no'}</td><td>${m.status}</td>
            </tr>`)}
        </tbody>
      </table>
    </section>
  `;
}
