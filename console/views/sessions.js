// The caller's sessions (a page at a time, each with its status and queued messages) and a form
// to start one with an agent.
import { html, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { humanError } from '../lib/errors.js';
import { ErrorLine, Loading, QueuedCount, useResource, useTitle, when } from '../lib/ui.js';

const PAGE = 20;

export function Sessions() {
  const [offset, setOffset] = useState(0);
  const sessions = useResource(() => api('GET', '/v1/sessions', { query: { offset, limit: PAGE } }), [offset]);
  const agents = useResource(() => api('GET', '/v1/agents'));
  const [error, setError] = useState('');
  useTitle('Sessions');
  const agentName = new Map((agents.data?.data ?? []).map((a) => [a.id, a.display_name || a.name]));

  const create = async (e) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setError('');
    try {
      const session = await api('POST', '/v1/sessions', { body: { agent_id: String(f.get('agent_id')), title: String(f.get('title')) || undefined } });
      location.hash = `#/sessions/${session.id}/chat`;
    } catch (err) {
      setError(`No session started: ${humanError(err, { notFound: 'That agent' })}`);
    }
  };
  const remove = async (s) => {
    if (!confirm('Delete this session and its history?')) return;
    await api('DELETE', `/v1/sessions/${s.id}`).then(sessions.reload, (err) => setError(`Not deleted: ${humanError(err)}`));
  };

  const page = sessions.data;
  return html`
    <section>
      <h1>Sessions</h1>
      <form class="bar card" onSubmit=${create}>
        <label class="inline">Agent
          <select name="agent_id" required>
            <option value="">choose…</option>
            ${(agents.data?.data ?? []).map((a) => html`<option key=${a.id} value=${a.id}>${a.display_name || a.name}</option>`)}
          </select>
        </label>
        <label class="inline">Title <input name="title" placeholder="optional" /></label>
        <button type="submit">New session</button>
      </form>
      <${Loading} res=${sessions} what="Loading sessions…" />
      <${ErrorLine} error=${sessions.error || error} />
      ${page && page.data.length === 0 && html`<p class="muted">No sessions yet.</p>`}
      ${page && page.data.length > 0 && html`
        <table data-testid="sessions">
          <thead><tr><th>Title</th><th>Agent</th><th>Status</th><th>Updated</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${page.data.map((s) => html`
              <tr key=${s.id} data-session-id=${s.id}>
                <td data-label="Title"><a href=${`#/sessions/${s.id}/chat`}>${s.title || 'Untitled session'}</a></td>
                <td data-label="Agent">${agentName.get(s.agent_id) ?? s.agent_id ?? ''}</td>
                <td data-label="Status"><span class=${`status ${s.status}`}>${s.status}</span> <${QueuedCount} n=${s.queued_messages} /></td>
                <td data-label="Updated">${when(s.updated_at)}</td>
                <td class="actions">
                  <a href=${`#/sessions/${s.id}/events`}>Events</a>
                  <a href=${`#/sessions/${s.id}/storage`}>Storage</a>
                  <button class="secondary" onClick=${() => remove(s)}>Delete</button>
                </td>
              </tr>`)}
          </tbody>
        </table>
        <div class="bar">
          <button class="secondary" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE))}>Previous</button>
          <span class="muted">${offset + 1}–${offset + page.data.length}${page.total !== undefined ? ` of ${page.total}` : ''}</span>
          <button class="secondary" disabled=${page.data.length < PAGE} onClick=${() => setOffset(offset + PAGE)}>Next</button>
        </div>`}
    </section>
  `;
}
