// One endpoint's delivery log: newest first, refreshed every few seconds while it is open (a
// test-send or a retry lands without a reload), each delivery's attempts (status, latency, error)
// on demand, and redelivery.
import { html, useEffect, useState } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { ErrorLine, Loading, useAction, useResource, when } from '../lib/ui.js';

const REFRESH_MS = 2000;

function Attempts({ endpointId, deliveryId }) {
  const detail = useResource(() => api('GET', `/v1/webhooks/${endpointId}/deliveries/${deliveryId}`), [endpointId, deliveryId], { notFound: 'This delivery' });
  if (detail.error) return html`<${ErrorLine} error=${detail.error} />`;
  if (!detail.data) return html`<span class="loading" role="status">Loading the attempts…</span>`;
  if (detail.data.attempts.length === 0) return html`<span class="muted">No attempt yet.</span>`;
  return html`
    <ol class="attempts" data-testid="webhook-attempts" data-delivery-id=${deliveryId}>
      ${detail.data.attempts.map((a) => {
        const answer = a.status === null ? 'no response' : `HTTP ${a.status}`;
        // A refused attempt's error is its status line ("HTTP 503"): said once, marked as an error.
        return html`
          <li key=${a.attempt} data-status=${a.status ?? ''}>
            #${a.attempt} ${when(a.started_at)}: <span class=${a.error ? 'error' : ''}>${answer}</span> in ${a.latency_ms} ms${a.error && a.error !== answer ? html`: <span class="error">${a.error}</span>` : ''}
          </li>`;
      })}
    </ol>
  `;
}

function outcome(d) {
  if (d.state === 'delivered') return `delivered ${when(d.delivered_at)}`;
  if (d.state === 'failed') return 'failed (no more retries)';
  return d.attempts === 0 ? 'pending' : `retrying at ${when(d.next_attempt_at)}`;
}

export function WebhookDeliveries({ endpoint }) {
  const deliveries = useResource(() => api('GET', `/v1/webhooks/${endpoint.id}/deliveries`, { query: { limit: 50 } }), [endpoint.id], {
    notFound: 'This endpoint',
  });
  const [open, setOpen] = useState(null);
  const { message, error, run } = useAction(deliveries.reload, { notFound: 'This delivery' });
  useEffect(() => {
    const timer = setInterval(deliveries.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [deliveries.reload]);

  const redeliver = (d) => run('Not redelivered', async () => (await api('POST', `/v1/webhooks/${endpoint.id}/deliveries/${d.id}/redeliver`), 'Queued again.'));
  const rows = deliveries.data?.data ?? [];
  return html`
    <div class="card" data-testid="webhook-deliveries" data-endpoint-id=${endpoint.id}>
      <h2>Deliveries to ${endpoint.url}</h2>
      <${Loading} res=${deliveries} what="Loading the deliveries…" />
      <${ErrorLine} error=${deliveries.error || error} />
      <p class="ok" role="status">${message}</p>
      ${deliveries.data && rows.length === 0 && html`<p class="muted">No deliveries yet. “Test” sends one.</p>`}
      ${rows.length > 0 && html`
        <table class="deliveries">
          <thead><tr><th>Event</th><th>State</th><th>Attempts</th><th>Last status</th><th>Last error</th><th>Created</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${rows.map((d) => [
              html`<tr key=${d.id} data-delivery-id=${d.id} data-state=${d.state}>
                <td data-label="Event"><code>${d.event_type}</code></td>
                <td data-label="State" class=${d.state === 'failed' ? 'error' : d.state === 'delivered' ? 'ok' : ''}>${outcome(d)}</td>
                <td data-label="Attempts">${d.attempts}</td>
                <td data-label="Last status">${d.last_status ?? ''}</td>
                <td data-label="Last error">${d.last_error ?? ''}</td>
                <td data-label="Created">${when(d.created_at)}</td>
                <td class="actions">
                  <button class="secondary" aria-expanded=${open === d.id} onClick=${() => setOpen(open === d.id ? null : d.id)}>Attempts</button>
                  <button class="secondary" onClick=${() => redeliver(d)}>Redeliver</button>
                </td>
              </tr>`,
              // A row of its own across the table: in the last cell the attempts' text took the other columns' room.
              open === d.id && html`<tr key=${`${d.id}-attempts`} class="attempts-row"><td colspan="7"><${Attempts} endpointId=${endpoint.id} deliveryId=${d.id} /></td></tr>`,
            ])}
          </tbody>
        </table>
        <p class="muted">${deliveries.data.total === 1 ? '1 delivery' : `${deliveries.data.total} deliveries`}${deliveries.data.total > rows.length ? `, the newest ${rows.length} shown` : ''}.</p>`}
    </div>
  `;
}
