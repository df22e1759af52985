// The caller's recent sessions beside the chat (wide screens only), the open one marked, each
// with the number of its messages waiting for a turn. `refresh` changes reload it (the chat
// passes its queue's changes, so the open session's count follows).
import { html } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { ErrorLine, Loading, QueuedCount, useResource } from '../lib/ui.js';

export function SessionList({ current, refresh = 0 }) {
  const sessions = useResource(() => api('GET', '/v1/sessions', { query: { limit: 30 } }), [refresh]);
  return html`
    <aside class="sidebar" aria-label="Recent sessions" data-testid="session-list">
      <h2>Sessions</h2>
      <${Loading} res=${sessions} />
      <${ErrorLine} error=${sessions.error} />
      <ul class="plain">
        ${(sessions.data?.data ?? []).map((s) => html`
          <li key=${s.id}>
            <a href=${`#/sessions/${s.id}/chat`} aria-current=${s.id === current ? 'page' : undefined} class=${s.id === current ? 'active' : ''}>${s.title || 'Untitled session'}</a>
            <${QueuedCount} n=${s.queued_messages} />
          </li>`)}
      </ul>
      <a href="#/sessions">All sessions…</a>
    </aside>
  `;
}
