// Import an agent from Markdown with YAML front matter, YAML or JSON, or from a shipped example.
import { html, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { humanError } from '../lib/errors.js';
import { ErrorLine, Loading, useResource, useTitle } from '../lib/ui.js';

const FORMATS = { markdown: 'text/markdown', yaml: 'application/yaml', json: 'application/json' };

export function AgentImport() {
  const examples = useResource(() => api('GET', '/v1/agent-examples'));
  const [error, setError] = useState('');
  useTitle('Import an agent');

  const done = (agent) => (location.hash = `#/agents/${agent.id}`);
  const importText = async (e) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setError('');
    await api('POST', '/v1/agents/import', { raw: String(f.get('definition')), contentType: FORMATS[String(f.get('format'))] }).then(done, (err) => setError(`Not imported: ${humanError(err)}`));
  };
  const importExample = async (name) => {
    setError('');
    await api('POST', '/v1/agents/import', { query: { 'from-example': name } }).then(done, (err) => setError(`Not imported: ${humanError(err, { notFound: 'That example' })}`));
  };

  return html`
    <section>
      <h1>Import an agent</h1>
      <form class="card" onSubmit=${importText}>
        <label>Format
          <select name="format">
            <option value="markdown">Markdown with YAML front matter</option>
            <option value="yaml">YAML</option>
            <option value="json">JSON</option>
          </select>
        </label>
        <label>Definition <textarea name="definition" rows="12" required></textarea></label>
        <button type="submit">Import</button>
      </form>
      <${ErrorLine} error=${error || examples.error} />
      <h2>Examples</h2>
      <${Loading} res=${examples} what="Loading examples…" />
      <ul class="plain">
        ${(examples.data?.data ?? []).map((x) => html`
          <li key=${x.name}>
            <button class="secondary" onClick=${() => importExample(x.name)}>Import</button>
            <strong>${x.agent_name}</strong> — ${x.description}
          </li>`)}
      </ul>
    </section>
  `;
}
