// For admins: the organisation's LLM providers (keys are write-only, never shown), adding and
// removing one, adding a model to a provider, a model sync per provider, and the models.
import { html } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { ErrorLine, Loading, useAction, useResource, useTitle, when } from '../lib/ui.js';
import { ProviderForm, ModelForm } from './provider-forms.js';

function syncText(name, r) {
  if (r.status !== 'success') return `${name}: this provider cannot list its models; add them by hand.`;
  return `${name}: ${r.created} new, ${r.updated} updated, ${r.stale} no longer listed.`;
}

function defaultText(d) {
  if (d?.model) return `the organisation default, ${d.model.display_name || d.model.model_id}`;
  return d?.system_default === 'llmsim' ? 'the built-in simulator' : 'no model (set a provider up first)';
}

export function Admin({ me }) {
  useTitle('Providers and models');
  const providers = useResource(() => api('GET', '/v1/llm-providers'));
  const models = useResource(() => api('GET', '/v1/llm-models'));
  const defaults = useResource(() => api('GET', '/v1/llm-models/default'));
  const { message, error, run: act } = useAction(() => {
    providers.reload();
    models.reload();
  });

  if (me.user.role !== 'admin') return html`<section><h1>Providers and models</h1><p class="error">Only admins manage providers and models.</p></section>`;

  const sync = (p) => act('Not synced', async () => syncText(p.name, await api('POST', `/v1/llm-providers/${p.id}/sync-models`)));
  const remove = (p) =>
    confirm(`Remove the provider "${p.name}" and its models?`) &&
    act('Not removed', async () => (await api('DELETE', `/v1/llm-providers/${p.id}`), `Removed ${p.name}.`));

  const list = providers.data?.data ?? [];
  return html`
    <section>
      <h1>Providers and models</h1>
      <${ErrorLine} error=${providers.error || models.error || error} />
      <p class="ok" role="status">${message}</p>
      <h2>Providers</h2>
      <${Loading} res=${providers} what="Loading providers…" />
      ${list.length > 0 && html`
        <table data-testid="providers">
          <thead><tr><th>Name</th><th>Type</th><th>Base URL</th><th>Key</th><th>Last sync</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${list.map((p) => html`
              <tr key=${p.id} data-provider-id=${p.id}>
                <td data-label="Name">${p.name}</td><td data-label="Type">${p.provider_type}</td><td data-label="Base URL" class="wrap">${p.base_url ?? 'vendor default'}</td>
                <td data-label="Key">${p.api_key_set ? 'set' : 'none'}</td><td data-label="Last sync">${when(p.last_synced_at) || 'never'}</td>
                <td class="actions">
                  <button class="secondary" onClick=${() => sync(p)}>Sync models</button>
                  <button class="danger" onClick=${() => remove(p)}>Remove</button>
                </td>
              </tr>`)}
          </tbody>
        </table>`}
      ${providers.data && list.length === 0 && html`<p class="muted">No providers: turns use ${defaultText(defaults.data)}.</p>`}
      <div class="columns">
        <${ProviderForm} onSaved=${(p) => act('Not added', async () => `Added the provider ${p.name}.`)} />
        ${list.length > 0 && html`<${ModelForm} providers=${list} onSaved=${(m) => act('Not added', async () => `Added the model ${m.display_name || m.model_id}.`)} />`}
      </div>
      <h2>Models</h2>
      <${Loading} res=${models} what="Loading models…" />
      ${models.data?.data?.length === 0 && html`<p class="muted">No models yet.</p>`}
      ${models.data?.data?.length > 0 && html`
        <table data-testid="models">
          <thead><tr><th>Model</th><th>Name</th><th>Provider</th><th>Capabilities</th><th>Enabled</th><th>Status</th></tr></thead>
          <tbody>
            ${models.data.data.map((m) => html`
              <tr key=${m.id}>
                <td data-label="Model"><code>${m.model_id}</code></td><td data-label="Name">${m.display_name}</td><td data-label="Provider">${m.provider_name}</td>
                <td data-label="Capabilities">${m.capabilities.join(', ')}</td><td data-label="Enabled">${m.enabled ? 'yes' : 'no'}</td><td data-label="Status">${m.status}</td>
              </tr>`)}
          </tbody>
        </table>`}
    </section>
  `;
}
