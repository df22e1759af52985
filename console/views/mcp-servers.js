// The `mcp` capability's servers in the agent editor (docs/decisions/0094-mcp-tools.md): name,
// URL, transport, allowed tools and headers. A header value is entered and shown only as a session
// secret reference (`{{secret:NAME}}`, optionally after a scheme such as `Bearer `): a literal
// value an API caller stored is never put on the page; it is kept as it is unless removed.
import { html } from '../vendor/preact-htm.js';

const SECRET_REF = /^(?:[A-Za-z][A-Za-z0-9-]* )?\{\{secret:[A-Za-z_][A-Za-z0-9_.:-]{0,127}\}\}$/;
export const isSecretReference = (value) => SECRET_REF.test(value);

/** Editable rows from an agent's capabilities (`[]` without an `mcp` entry). */
export function mcpRowsOf(capabilities) {
  const mcp = capabilities.find((c) => typeof c === 'object' && c.ref === 'mcp');
  return (mcp?.config?.servers ?? []).map((s) => ({
    name: s.name,
    url: s.url,
    transport: s.transport ?? 'auto',
    allowed_tools: (s.allowed_tools ?? []).join(', '),
    headers: Object.entries(s.headers ?? {}).map(([name, value]) => ({ name, value, hidden: !isSecretReference(value) })),
  }));
}

/** The capability config from the rows; throws a sentence for a header value that is not a reference. */
export function mcpConfigOf(rows) {
  const servers = rows.map((r) => {
    const headers = {};
    for (const h of r.headers) {
      const name = h.name.trim();
      if (!name) continue;
      if (!h.hidden && !isSecretReference(h.value.trim()))
        throw new Error(`MCP server “${r.name}”: the header “${name}” must be a secret reference such as {{secret:TOKEN}} or Bearer {{secret:TOKEN}}; set the value as a session secret.`);
      headers[name] = h.hidden ? h.value : h.value.trim();
    }
    const tools = r.allowed_tools.split(/[\s,]+/).filter(Boolean);
    return {
      name: r.name.trim(),
      url: r.url.trim(),
      ...(Object.keys(headers).length ? { headers } : {}),
      ...(tools.length ? { allowed_tools: tools } : {}),
      ...(r.transport && r.transport !== 'auto' ? { transport: r.transport } : {}),
    };
  });
  return { servers };
}

const EMPTY_SERVER = () => ({ name: '', url: '', transport: 'auto', allowed_tools: '', headers: [] });

export function McpServers({ rows, onChange }) {
  const set = (i, patch) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const setHeader = (i, k, patch) => set(i, { headers: rows[i].headers.map((h, j) => (j === k ? { ...h, ...patch } : h)) });
  return html`
    <fieldset data-testid="mcp-servers">
      <legend>MCP servers (used when the mcp capability is checked)</legend>
      ${rows.length === 0 && html`<p class="muted">No MCP servers.</p>`}
      ${rows.map((r, i) => html`
        <div class="card mcp-server" key=${i} data-server-index=${i}>
          <label>Server name <input value=${r.name} required onInput=${(e) => set(i, { name: e.currentTarget.value })} data-field="name" /></label>
          <label>URL <input type="url" value=${r.url} required onInput=${(e) => set(i, { url: e.currentTarget.value })} data-field="url" /></label>
          <label>Transport
            <select value=${r.transport} onChange=${(e) => set(i, { transport: e.currentTarget.value })} data-field="transport">
              <option value="auto">auto (Streamable HTTP, then SSE)</option>
              <option value="streamable_http">Streamable HTTP</option>
              <option value="sse">SSE (older servers)</option>
            </select>
          </label>
          <label>Allowed tools (comma separated; empty: all) <input value=${r.allowed_tools} onInput=${(e) => set(i, { allowed_tools: e.currentTarget.value })} data-field="allowed_tools" /></label>
          ${r.headers.map((h, k) => html`
            <div class="bar" key=${k} data-header-index=${k}>
              <label>Header <input value=${h.name} onInput=${(e) => setHeader(i, k, { name: e.currentTarget.value })} data-field="header-name" /></label>
              ${h.hidden
                ? html`<span class="muted" data-testid="hidden-header">a literal value, not shown (kept)</span>`
                : html`<label>Value (secret reference) <input value=${h.value} placeholder="Bearer {{secret:TOKEN}}" onInput=${(e) => setHeader(i, k, { value: e.currentTarget.value })} data-field="header-value" /></label>`}
              <button type="button" class="secondary" onClick=${() => set(i, { headers: r.headers.filter((_, j) => j !== k) })}>Remove header</button>
            </div>`)}
          <div class="bar">
            <button type="button" class="secondary" onClick=${() => set(i, { headers: [...r.headers, { name: '', value: '', hidden: false }] })}>Add header</button>
            <button type="button" class="danger" onClick=${() => onChange(rows.filter((_, j) => j !== i))}>Remove server</button>
          </div>
        </div>`)}
      <button type="button" class="secondary" onClick=${() => onChange([...rows, EMPTY_SERVER()])}>Add MCP server</button>
    </fieldset>
  `;
}
