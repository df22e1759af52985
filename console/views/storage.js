// What a session keeps: its files, its key/value keys and its secret NAMES. Values are never
// fetched here (KV is listed without include_values; the API never returns secret values).
import { html } from '../vendor/preact-htm.js';
import { api, ApiError } from '../lib/api.js';
import { ErrorLine, useResource } from '../lib/ui.js';
import { SessionNav } from './session-nav.js';

/** A 404 here means the session lacks that capability: shown as such, not as an error. */
const optional = (promise) => promise.catch((err) => (err instanceof ApiError && err.status === 404 ? { missing: err.message } : Promise.reject(err)));

export function Storage({ sessionId }) {
  const files = useResource(() => optional(api('GET', `/v1/sessions/${sessionId}/fs`, { query: { recursive: true } })));
  const keys = useResource(() => optional(api('GET', `/v1/sessions/${sessionId}/storage/keys`)));
  const secrets = useResource(() => optional(api('GET', `/v1/sessions/${sessionId}/storage/secrets`)));

  return html`
    <section>
      <${SessionNav} sessionId=${sessionId} current="storage" />
      <div class="columns">
        <${Panel} title="Files" res=${files} testid="files" render=${(d) => (d.data ?? d.entries ?? []).map((f) => html`<li key=${f.path}><code>${f.path}</code>${f.type === 'directory' ? '/' : ''} <span class="muted">${f.size ?? ''}</span></li>`)} />
        <${Panel} title="Key/value keys" res=${keys} testid="kv" render=${(d) => (d.data ?? []).map((k) => html`<li key=${k.key}><code>${k.key}</code></li>`)} />
        <${Panel} title="Secret names" res=${secrets} testid="secrets" render=${(d) => (d.data ?? d.names ?? []).map((s) => { const name = typeof s === 'string' ? s : s.name; return html`<li key=${name}><code>${name}</code></li>`; })} />
      </div>
    </section>
  `;
}

function Panel({ title, res, render, testid }) {
  return html`
    <div class="card" data-testid=${testid}>
      <h2>${title} <button class="link" onClick=${res.reload}>refresh</button></h2>
      <${ErrorLine} error=${res.error} />
      ${res.data?.missing ? html`<p class="muted">${res.data.missing}</p>` : res.data && html`<ul class="plain">${render(res.data)}</ul>`}
    </div>
  `;
}
