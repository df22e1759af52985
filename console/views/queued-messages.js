// The messages waiting for a turn, at the top of the chat's composer: each with its place in
// the queue (an interrupting one runs first) and a button that takes it out (lib/queued.js).
import { html, useState } from '../vendor/preact-htm.js';
import { textOf } from '../lib/transcript.js';
import { ErrorLine } from '../lib/ui.js';

export function QueuedMessages({ queue }) {
  const [cancelling, setCancelling] = useState(null);
  if (!queue.queued.length && !queue.error) return null;
  const cancel = async (id) => {
    setCancelling(id);
    await queue.cancel(id);
    setCancelling(null);
  };
  const n = queue.queued.length;
  return html`
    <section class="queued" data-testid="queued-messages" aria-label="Queued messages">
      <${ErrorLine} error=${queue.error} />
      ${n > 0 && html`<p class="muted" data-testid="queued-summary">${n} queued: ${n === 1 ? 'it runs' : 'they run in this order'} after the current turn</p>`}
      <ol>
        ${queue.queued.map((q, i) => {
          const text = textOf(q.message?.content) || '(no text)';
          return html`
            <li key=${q.id} data-queued-id=${q.id} data-position=${i + 1}>
              <span class="position-mark" aria-label=${`Position ${i + 1}`}>${i + 1}</span>
              ${q.on_busy === 'interrupt' && html`<span class="badge">interrupt</span>`}
              <span class="text" title=${text}>${text}</span>
              <button type="button" class="secondary" disabled=${cancelling === q.id} onClick=${() => cancel(q.id)} aria-label=${`Cancel queued message ${i + 1}`}>Cancel</button>
            </li>`;
        })}
      </ol>
    </section>
  `;
}
