// What a session keeps: its files (with upload and preview), its key/value entries (values only
// when asked; set and delete) and its secret NAMES (with a form to set one; the API never
// returns secret values).
import { html, useState } from '../vendor/preact-htm.js';
import { api, ApiError } from '../lib/api.js';
import { ErrorLine, Loading, useResource } from '../lib/ui.js';
import { FilesPanel } from './files-panel.js';
import { KvPanel } from './kv-panel.js';
import { SecretsPanel } from './secrets-panel.js';
import { SessionNav, sessionMissing, useSession } from './session-nav.js';

/** A 404 here (the session itself exists) means it lacks that capability: shown as such, not as an error. */
const optional = (promise, what) =>
  promise.catch((err) => (err instanceof ApiError && err.status === 404 ? { missing: `This session has no ${what}.` } : Promise.reject(err)));

export function Storage({ sessionId }) {
  const session = useSession(sessionId);
  const files = useResource(() => optional(api('GET', `/v1/sessions/${sessionId}/fs`, { query: { recursive: true } }), 'file system'));
  const [showValues, setShowValues] = useState(false);
  const keys = useResource(
    () => optional(api('GET', `/v1/sessions/${sessionId}/storage/keys`, { query: { include_values: showValues || undefined } }), 'key/value store'),
    [showValues],
  );
  const secrets = useResource(() => optional(api('GET', `/v1/sessions/${sessionId}/storage/secrets`), 'secret store'));

  if (sessionMissing(session)) return html`<section><${SessionNav} sessionId=${sessionId} current="storage" session=${session} /></section>`;
  return html`
    <section>
      <${SessionNav} sessionId=${sessionId} current="storage" session=${session} />
      <div class="columns">
        <${Panel} title="Files" res=${files} testid="files">
          <${FilesPanel} sessionId=${sessionId} res=${files} />
        </${Panel}>
        <${Panel} title="Key/value entries" res=${keys} testid="kv">
          <${KvPanel} sessionId=${sessionId} res=${keys} showValues=${showValues} onShowValues=${setShowValues} />
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
