// The caller's recent sessions beside the chat (wide screens only), the open one marked.
import { html } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { ErrorLine, Loading, useResource } from '../lib/ui.js';

export function SessionList({ current }) {
  const sessions = useResource(() => api('GET', '/v1/sessions', { query: { limit: 30 } }));
  return html`
    <aside class="sidebar" aria-label="Recent sessions" data-testid="session-list">
      <h2>Sessions</h2>
      <${Loading} res=${sessions} />
      <${ErrorLine} error=${sessions.error} />
      <ul class="plain">
        ${(sessions.data?.data ?? []).map((s) => html`
          <li key=${s.id}>
            <a href=${`#/sessions/${s.id}/chat`} aria-current=${s.id === current ? 'page' : undefined} class=${s.id === current ? 'active' : ''}>${s.title || 'Untitled session'}</a>
          </li>`)}
      </ul>
      <a href="#/sessions">All sessions…</a>
    </aside>
  `;
}
