// The admin's forms: a new LLM provider (the key goes out once and is never shown again) and a
// model added by hand to a provider that cannot list its models.
import { html, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { humanError } from '../lib/errors.js';
import { ErrorLine } from '../lib/ui.js';

const TYPES = [
  ['openai', 'OpenAI (Responses API)'],
  ['openai_completions', 'OpenAI-compatible (Chat Completions)'],
  ['anthropic', 'Anthropic'],
  ['gemini', 'Google Gemini'],
  ['llmsim', 'Built-in simulator'],
];

/** Submits the form's fields to `send`; clears the form and calls `onSaved` with the answer. */
function useSubmit(send, onSaved) {
  const [error, setError] = useState('');
  const submit = async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    setError('');
    try {
      onSaved(await send(new FormData(form)));
      form.reset();
    } catch (err) {
      setError(`Not saved: ${humanError(err)}`);
    }
  };
  return { error, submit };
}

export function ProviderForm({ onSaved }) {
  const { error, submit } = useSubmit((f) => {
    const baseUrl = String(f.get('base_url')).trim();
    const body = { name: String(f.get('name')).trim(), provider_type: String(f.get('provider_type')), api_key: String(f.get('api_key')) };
    return api('POST', '/v1/llm-providers', { body: baseUrl ? { ...body, base_url: baseUrl } : body });
  }, onSaved);
  return html`
    <form class="card stack" onSubmit=${submit} data-testid="provider-form">
      <h2>Add a provider</h2>
      <label>Name <input name="name" required autocomplete="off" /></label>
      <label>Type <select name="provider_type">${TYPES.map(([v, label]) => html`<option key=${v} value=${v}>${label}</option>`)}</select></label>
      <label>API key <input name="api_key" type="password" required autocomplete="new-password" /></label>
      <label>Base URL (optional) <input name="base_url" type="url" placeholder="vendor default" /></label>
      <button type="submit">Add provider</button>
      <${ErrorLine} error=${error} />
    </form>
  `;
}

export function ModelForm({ providers, onSaved }) {
  const { error, submit } = useSubmit((f) => {
    const displayName = String(f.get('display_name')).trim();
    const body = { model_id: String(f.get('model_id')).trim(), ...(displayName ? { display_name: displayName } : {}) };
    return api('POST', `/v1/llm-providers/${String(f.get('provider_id'))}/models`, { body });
  }, onSaved);
  return html`
    <form class="card stack" onSubmit=${submit} data-testid="model-form">
      <h2>Add a model</h2>
      <label>Provider <select name="provider_id">${providers.map((p) => html`<option key=${p.id} value=${p.id}>${p.name}</option>`)}</select></label>
      <label>Model id (the vendor's name) <input name="model_id" required autocomplete="off" /></label>
      <label>Display name (optional) <input name="display_name" autocomplete="off" /></label>
      <button type="submit">Add model</button>
      <${ErrorLine} error=${error} />
    </form>
  `;
}
