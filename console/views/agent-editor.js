// Create or edit an agent, with a preview of the runtime system prompt and tools (nothing stored).
import { html, useEffect, useState } from '../vendor/preact-htm.js';
import { ApiError, api } from '../lib/api.js';
import { humanError } from '../lib/errors.js';
import { ErrorLine, parseJsonField, useTitle } from '../lib/ui.js';
import { McpServers, mcpConfigOf, mcpRowsOf } from './mcp-servers.js';

const EMPTY = { name: '', description: '', system_prompt: '', capabilities: [], client_tools: [], max_iterations: null, default_model_id: null };

export function AgentEditor({ agentId }) {
  const [agent, setAgent] = useState(agentId ? null : EMPTY);
  const [capabilities, setCapabilities] = useState([]);
  const [error, setError] = useState('');
  const [preview, setPreview] = useState(null);
  const [saved, setSaved] = useState('');
  const [mcpRows, setMcpRows] = useState([]);
  const loaded = (a) => {
    setAgent(a);
    setMcpRows(mcpRowsOf(a.capabilities));
  };
  useTitle(agentId ? `Agent ${agent?.name ?? ''}` : 'New agent');

  useEffect(() => {
    api('GET', '/v1/capabilities').then((r) => setCapabilities(r.data ?? []), () => {});
    if (agentId) api('GET', `/v1/agents/${agentId}`).then(loaded, (err) => setError(humanError(err, { notFound: 'This agent' })));
  }, [agentId]);

  if (!agent) return html`<section><h1>Agent</h1>${error ? html`<${ErrorLine} error=${error} />` : html`<p class="loading" role="status">Loading the agent…</p>`}</section>`;

  const read = (form) => {
    const f = new FormData(form);
    const maxIterations = String(f.get('max_iterations') ?? '').trim();
    return {
      name: String(f.get('name')).trim(),
      description: String(f.get('description')) || null,
      system_prompt: String(f.get('system_prompt')),
      capabilities: withConfigs(f.getAll('capabilities').map(String), agent.capabilities, mcpRows),
      client_tools: parseJsonField(String(f.get('client_tools')), 'Client tools', []),
      max_iterations: maxIterations ? Number(maxIterations) : null,
      default_model_id: String(f.get('default_model_id') ?? '').trim() || null,
    };
  };

  const save = async (e) => {
    e.preventDefault();
    setError('');
    setSaved('');
    try {
      const body = read(e.currentTarget);
      const result = agentId ? await api('PATCH', `/v1/agents/${agentId}`, { body }) : await api('POST', '/v1/agents', { body });
      if (agentId) {
        loaded(result);
        setSaved('Saved.');
      } else location.hash = `#/agents/${result.id}`;
    } catch (err) {
      setError(`Not saved: ${fieldError(err)}`);
    }
  };

  const showPreview = async (e) => {
    setError('');
    try {
      const { system_prompt, capabilities: caps, client_tools } = read(e.currentTarget.form);
      setPreview(await api('POST', '/v1/agents/preview', { body: { system_prompt, capabilities: caps, client_tools } }));
    } catch (err) {
      setError(`No preview: ${humanError(err)}`);
    }
  };

  // Fields are uncontrolled (defaultValue): a re-render (preview, saved notice) keeps what was typed.
  const chosen = new Set(agent.capabilities.map((c) => (typeof c === 'string' ? c : c.ref)));
  return html`
    <section>
      <h1>${agentId ? `Agent ${agent.name}` : 'New agent'}</h1>
      ${agentId && html`<p><a href=${`/v1/agents/${agentId}/export`} onClick=${(e) => exportAgent(e, agentId, agent.name)}>Export as Markdown</a></p>`}
      <form class="card" onSubmit=${save} data-testid="agent-form">
        <label>Name <input name="name" defaultValue=${agent.name} required /></label>
        <label>Description <input name="description" defaultValue=${agent.description ?? ''} /></label>
        <label>System prompt <textarea name="system_prompt" rows="6" required defaultValue=${agent.system_prompt}></textarea></label>
        <fieldset>
          <legend>Capabilities</legend>
          ${capabilities.map((c) => html`
            <label class="inline" title=${c.description ?? ''}>
              <input type="checkbox" name="capabilities" value=${c.id} defaultChecked=${chosen.has(c.id)} /> ${c.id}
            </label>`)}
        </fieldset>
        ${capabilities.some((c) => c.id === 'mcp') && html`<${McpServers} rows=${mcpRows} onChange=${setMcpRows} />`}
        <label>Client tools (JSON array of {name, description, parameters})
          <textarea name="client_tools" rows="4" defaultValue=${agent.client_tools.length ? JSON.stringify(agent.client_tools, null, 2) : ''}></textarea>
        </label>
        <label>Default model id <input name="default_model_id" defaultValue=${agent.default_model_id ?? ''} placeholder="organisation default" /></label>
        <label>Max iterations <input name="max_iterations" type="number" min="1" max="1000" defaultValue=${agent.max_iterations ?? ''} /></label>
        <div class="bar">
          <button type="submit">${agentId ? 'Save' : 'Create agent'}</button>
          <button type="button" class="secondary" onClick=${showPreview}>Preview</button>
          <span class="ok">${saved}</span>
        </div>
      </form>
      <${ErrorLine} error=${error} />
      ${preview && html`
        <div class="card" data-testid="agent-preview">
          <h2>Runtime system prompt</h2>
          <pre>${preview.system_prompt}</pre>
          <h2>Tools (${preview.tools.length})</h2>
          <ul>${preview.tools.map((t) => html`<li key=${t.name}><code>${t.name}</code> ${t.description}</li>`)}</ul>
        </div>`}
    </section>
  `;
}

/** The service's refusal in plain words, or the form's own check (its message names the field). */
const fieldError = (err) => (err instanceof ApiError || err instanceof TypeError ? humanError(err) : err.message);

/**
 * The checked capability ids as the API takes them: `mcp` with the servers edited here, any other
 * capability with the config it had (the editor has no form for it, and saving must not drop it).
 */
function withConfigs(ids, previous, mcpRows) {
  const configs = new Map(previous.filter((c) => typeof c === 'object').map((c) => [c.ref, c.config]));
  return ids.map((id) => {
    if (id === 'mcp') return mcpRows.length ? { ref: 'mcp', config: mcpConfigOf(mcpRows) } : 'mcp';
    return configs.has(id) ? { ref: id, config: configs.get(id) } : id;
  });
}

/** Downloads the Markdown export (the link itself would go out without the credential). */
async function exportAgent(e, id, name) {
  e.preventDefault();
  const markdown = await api('GET', `/v1/agents/${id}/export`);
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([markdown], { type: 'text/markdown' }));
  a.download = `${name}.md`;
  a.click();
  URL.revokeObjectURL(a.href);
}
