// The form that registers a webhook endpoint: URL, the event types (checkboxes from the catalogue
// the API's OpenAPI document offers, so the console never keeps its own copy), an optional
// description and filter. The signing secret comes back in the answer only; the caller shows it.
import { html, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { humanError } from '../lib/errors.js';
import { ErrorLine, useResource } from '../lib/ui.js';

/** The event types an endpoint may subscribe to, as the OpenAPI document of the service lists them. */
export async function webhookEventTypes() {
  const doc = await api('GET', '/api-doc/openapi.json');
  const items = doc?.components?.schemas?.WebhookEndpointCreate?.properties?.event_types?.items;
  return (items?.anyOf ?? items?.enum?.map((v) => ({ const: v })) ?? []).map((t) => t.const).filter((t) => typeof t === 'string');
}

/** "a, b c" → ["a", "b", "c"]. */
const words = (text) => String(text ?? '').split(/[\s,]+/).filter(Boolean);

/** The create body from the form's fields; the filter only with what was given. */
export function readWebhookForm(f) {
  const filter = {};
  const agents = words(f.get('agent_ids'));
  const tags = words(f.get('session_tags'));
  if (agents.length) filter.agent_ids = agents;
  if (tags.length) filter.session_tags = tags;
  const description = String(f.get('description') ?? '').trim();
  return {
    url: String(f.get('url')).trim(),
    event_types: f.getAll('event_types').map(String),
    ...(description ? { description } : {}),
    ...(Object.keys(filter).length ? { filter } : {}),
  };
}

export function WebhookForm({ onCreated }) {
  const types = useResource(webhookEventTypes);
  const [error, setError] = useState('');

  const submit = async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    setError('');
    const body = readWebhookForm(new FormData(form));
    if (body.event_types.length === 0) return setError('Not created: choose at least one event type.');
    try {
      onCreated(await api('POST', '/v1/webhooks', { body }));
      form.reset();
    } catch (err) {
      setError(`Not created: ${humanError(err)}`);
    }
  };

  return html`
    <form class="card stack" onSubmit=${submit} data-testid="webhook-form">
      <h2>New endpoint</h2>
      <label>URL <input name="url" type="url" required placeholder="https://example.com/hooks/agents" autocomplete="off" /></label>
      <label>Description (optional) <input name="description" maxlength="500" autocomplete="off" /></label>
      <fieldset data-testid="webhook-event-types">
        <legend>Event types</legend>
        ${types.loading && !types.data && html`<p class="loading" role="status">Loading the event types…</p>`}
        <${ErrorLine} error=${types.error && `The event types are not available: ${types.error}`} />
        ${(types.data ?? []).map((t) => html`<label class="inline" key=${t}><input type="checkbox" name="event_types" value=${t} /> ${t}</label>`)}
      </fieldset>
      <details class="filters">
        <summary>Filter (optional)</summary>
        <label>Only sessions of these agent ids (comma separated) <input name="agent_ids" autocomplete="off" /></label>
        <label>Only sessions with one of these tags (comma separated) <input name="session_tags" autocomplete="off" /></label>
      </details>
      <button type="submit">Create endpoint</button>
      <${ErrorLine} error=${error} />
    </form>
  `;
}

/** A signing secret, shown once after creating or rotating; gone when dismissed. */
export function SecretOnce({ secret, onDismiss }) {
  if (!secret) return null;
  return html`
    <div class="card secret-once" role="status" data-testid="webhook-secret-card">
      <p><strong>Signing secret of ${secret.url}</strong>: copy it now; it is not shown again.</p>
      <p><code data-testid="webhook-secret">${secret.value}</code></p>
      <button class="secondary" onClick=${onDismiss}>I have copied it</button>
    </div>
  `;
}
