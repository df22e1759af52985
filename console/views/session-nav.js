// The tabs shared by a session's views.
import { html } from '../vendor/preact-htm.js';

export function SessionNav({ sessionId, current }) {
  const tab = (name, label) => html`<a class=${current === name ? 'active' : ''} href=${`#/sessions/${sessionId}/${name}`}>${label}</a>`;
  return html`<nav class="tabs session-tabs">${tab('chat', 'Chat')}${tab('events', 'Events')}${tab('storage', 'Files, KV, secrets')}<code class="muted">${sessionId}</code></nav>`;
}
