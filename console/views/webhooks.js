// For admins (every /v1/webhooks route is admin-only: an endpoint receives the events of every
// session of the organisation, docs/decisions/0095-webhooks.md): the organisation's webhook
// endpoints with their state, a form to register one (its secret shown once), secret rotation,
// enable/disable, delete, a test-send, and one endpoint's deliveries at a time.
import { html, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { ErrorLine, Loading, useAction, useResource, useTitle, when } from '../lib/ui.js';
import { WebhookDeliveries } from './webhook-deliveries.js';
import { SecretOnce, WebhookForm } from './webhook-form.js';

function Status({ endpoint: e }) {
  if (e.status === 'active') return html`<span class="ok">active</span>${e.consecutive_failures > 0 ? html` <span class="muted">(${e.consecutive_failures} failures in a row)</span>` : ''}`;
  return html`<span class="error">disabled</span> <span class="muted">${e.disabled_reason ?? 'by an admin'}${e.disabled_at ? `, ${when(e.disabled_at)}` : ''}</span>`;
}

function filterText(f) {
  const parts = [];
  if (f?.agent_ids?.length) parts.push(`agents ${f.agent_ids.join(', ')}`);
  if (f?.session_ids?.length) parts.push(`sessions ${f.session_ids.join(', ')}`);
  if (f?.session_tags?.length) parts.push(`tags ${f.session_tags.join(', ')}`);
  return parts.join('; ') || 'every session';
}

export function Webhooks({ me }) {
  useTitle('Webhooks');
  const isAdmin = me.user.role === 'admin';
  const endpoints = useResource(() => (isAdmin ? api('GET', '/v1/webhooks') : Promise.resolve({ data: [], total: 0 })), [isAdmin]);
  const [secret, setSecret] = useState(null);
  const [shown, setShown] = useState(null);
  const { message, error, run } = useAction(endpoints.reload, { notFound: 'This endpoint' });

  if (!isAdmin) return html`<section><h1>Webhooks</h1><p class="error">Only admins manage webhooks: an endpoint receives the events of every session of the organisation.</p></section>`;

  const created = ({ endpoint, secret: value }) => {
    setSecret({ url: endpoint.url, value });
    setShown(endpoint.id);
    endpoints.reload();
  };
  const rotate = (e) =>
    confirm(`Rotate the signing secret of ${e.url}? The previous one keeps signing for the overlap set by the operator.`) &&
    run('Not rotated', async () => {
      const r = await api('POST', `/v1/webhooks/${e.id}/rotate-secret`, { body: {} });
      setSecret({ url: e.url, value: r.secret });
      return r.previous_secret_expires_at ? `Rotated; the previous secret signs too until ${when(r.previous_secret_expires_at)}.` : 'Rotated.';
    });
  const setStatus = (e, status) =>
    run(status === 'active' ? 'Not enabled' : 'Not disabled', async () => (await api('PATCH', `/v1/webhooks/${e.id}`, { body: { status } }), `${status === 'active' ? 'Enabled' : 'Disabled'} ${e.url}.`));
  const remove = (e) =>
    confirm(`Delete the endpoint ${e.url} and its delivery log?`) &&
    run('Not deleted', async () => {
      await api('DELETE', `/v1/webhooks/${e.id}`);
      if (shown === e.id) setShown(null);
      return `Deleted ${e.url}.`;
    });
  const test = (e) =>
    run('Not sent', async () => {
      await api('POST', `/v1/webhooks/${e.id}/test`);
      setShown(e.id);
      return `A webhook.test delivery to ${e.url} is queued.`;
    });

  const list = endpoints.data?.data ?? [];
  const open = list.find((e) => e.id === shown);
  return html`
    <section>
      <h1>Webhooks</h1>
      <p class="muted">Endpoints receive the organisation's session events as signed POSTs (Standard Webhooks).</p>
      <${ErrorLine} error=${endpoints.error || error} />
      <p class="ok" role="status">${message}</p>
      <${SecretOnce} secret=${secret} onDismiss=${() => setSecret(null)} />
      <${Loading} res=${endpoints} what="Loading the endpoints…" />
      ${endpoints.data && list.length === 0 && html`<p class="muted">No endpoints yet.</p>`}
      ${list.length > 0 && html`
        <table data-testid="webhooks">
          <thead><tr><th>URL</th><th>Event types</th><th>Filter</th><th>Status</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${list.map((e) => html`
              <tr key=${e.id} data-endpoint-id=${e.id} data-status=${e.status}>
                <td data-label="URL"><code>${e.url}</code>${e.description && html`<div class="muted">${e.description}</div>`}</td>
                <td data-label="Event types">${e.event_types.join(', ')}</td>
                <td data-label="Filter">${filterText(e.filter)}</td>
                <td data-label="Status"><${Status} endpoint=${e} /></td>
                <td class="actions">
                  <button class="secondary" aria-pressed=${shown === e.id} onClick=${() => setShown(shown === e.id ? null : e.id)}>Deliveries</button>
                  <button class="secondary" onClick=${() => test(e)} disabled=${e.status !== 'active'}>Test</button>
                  ${e.status === 'active'
                    ? html`<button class="secondary" onClick=${() => setStatus(e, 'disabled')}>Disable</button>`
                    : html`<button class="secondary" onClick=${() => setStatus(e, 'active')}>Enable</button>`}
                  <button class="secondary" onClick=${() => rotate(e)}>Rotate secret</button>
                  <button class="danger" onClick=${() => remove(e)}>Delete</button>
                </td>
              </tr>`)}
          </tbody>
        </table>`}
      ${open && html`<${WebhookDeliveries} key=${open.id} endpoint=${open} />`}
      <${WebhookForm} onCreated=${created} />
    </section>
  `;
}
