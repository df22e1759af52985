// The organisation's agents: list, then create, edit, import or start a session with one.
import { html, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { humanError } from '../lib/errors.js';
import { ErrorLine, Loading, useResource, useTitle, when } from '../lib/ui.js';

export function Agents() {
  const [archived, setArchived] = useState(false);
  const agents = useResource(() => api('GET', '/v1/agents', { query: { include_archived: archived } }), [archived]);
  const [error, setError] = useState('');
  useTitle('Agents');

  const startSession = async (agent) => {
    try {
      const session = await api('POST', '/v1/sessions', { body: { agent_id: agent.id, title: `Chat with ${agent.name}` } });
      location.hash = `#/sessions/${session.id}/chat`;
    } catch (err) {
      setError(`No session started: ${humanError(err)}`);
    }
  };
  const archive = async (agent) => {
    if (!confirm(`Archive agent "${agent.name}"?`)) return;
    await api('DELETE', `/v1/agents/${agent.id}`).then(agents.reload, (err) => setError(`Not archived: ${humanError(err)}`));
  };

  return html`
    <section>
      <div class="bar">
        <h1>Agents</h1>
        <a class="button" href="#/agents/new">New agent</a>
        <a class="button secondary" href="#/agents/import">Import</a>
        <label class="inline"><input type="checkbox" checked=${archived} onChange=${(e) => setArchived(e.currentTarget.checked)} /> archived too</label>
      </div>
      <${Loading} res=${agents} what="Loading agents…" />
      <${ErrorLine} error=${agents.error || error} />
      ${agents.data && agents.data.data.length === 0 && html`<p class="muted">No agents yet.</p>`}
      ${agents.data && agents.data.data.length > 0 && html`
        <table data-testid="agents">
          <thead><tr><th>Name</th><th>Description</th><th>Capabilities</th><th>Updated</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${agents.data.data.map((a) => html`
              <tr key=${a.id} data-agent-id=${a.id} class=${a.status === 'archived' ? 'archived' : ''}>
                <td data-label="Name"><a href=${`#/agents/${a.id}`}>${a.display_name || a.name}</a></td>
                <td data-label="Description">${a.description ?? ''}</td>
                <td data-label="Capabilities">${a.capabilities.map((c) => (typeof c === 'string' ? c : c.ref)).join(', ')}</td>
                <td data-label="Updated">${when(a.updated_at)}</td>
                <td class="actions">
                  ${a.status === 'active' && html`<button onClick=${() => startSession(a)}>Chat</button>`}
                  ${a.status === 'active' && html`<button class="secondary" onClick=${() => archive(a)}>Archive</button>`}
                </td>
              </tr>`)}
          </tbody>
        </table>`}
    </section>
  `;
}
