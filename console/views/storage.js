// What a session keeps: its files (with upload and preview), its key/value keys and its secret
// NAMES (with a form to set one). KV values are never fetched here (listed without
// include_values), and the API never returns secret values.
import { html } from '../vendor/preact-htm.js';
import { api, ApiError } from '../lib/api.js';
import { ErrorLine, Loading, useResource } from '../lib/ui.js';
import { FilesPanel } from './files-panel.js';
import { SecretsPanel } from './secrets-panel.js';
import { SessionNav, sessionMissing, useSession } from './session-nav.js';

/** A 404 here (the session itself exists) means it lacks that capability: shown as such, not as an error. */
const optional = (promise, what) =>
  promise.catch((err) => (err instanceof ApiError && err.status === 404 ? { missing: `This session has no ${what}.` } : Promise.reject(err)));

export function Storage({ sessionId }) {
  const session = useSession(sessionId);
  const files = useResource(() => optional(api('GET', `/v1/sessions/${sessionId}/fs`, { query: { recursive: true } }), 'file system'));
  const keys = useResource(() => optional(api('GET', `/v1/sessions/${sessionId}/storage/keys`), 'key/value store'));
  const secrets = useResource(() => optional(api('GET', `/v1/sessions/${sessionId}/storage/secrets`), 'secret store'));

  if (sessionMissing(session)) return html`<section><${SessionNav} sessionId=${sessionId} current="storage" session=${session} /></section>`;
  return html`
    <section>
      <${SessionNav} sessionId=${sessionId} current="storage" session=${session} />
      <div class="columns">
        <${Panel} title="Files" res=${files} testid="files">
          <${FilesPanel} sessionId=${sessionId} res=${files} />
        </${Panel}>
        <${Panel} title="Key/value keys" res=${keys} testid="kv">
          ${keys.data?.data?.length === 0 && html`<p class="muted">No keys yet.</p>`}
          <ul class="plain">${(keys.data?.data ?? []).map((k) => html`<li key=${k.key}><code>${k.key}</code></li>`)}</ul>
        </${Panel}>
        <${Panel} title="Secret names" res=${secrets} testid="secrets">
          <${SecretsPanel} sessionId=${sessionId} res=${secrets} />
        </${Panel}>
      </div>
    </section>
  `;
}

function Panel({ title, res, testid, children }) {
  return html`
    <div class="card" data-testid=${testid}>
      <h2>${title} <button type="button" class="link" onClick=${res.reload}>refresh</button></h2>
      <${Loading} res=${res} />
      <${ErrorLine} error=${res.error} />
      ${res.data?.missing ? html`<p class="muted">${res.data.missing}</p>` : res.data && children}
    </div>
  `;
}
