// The heading and tabs shared by a session's views. The session is loaded once per view: its
// title names the page, and an unknown id shows one clear "not found" instead of each panel's error.
import { html } from '../vendor/preact-htm.js';
import { api } from '../lib/api.js';
import { isNotFound } from '../lib/errors.js';
import { useResource, useTitle } from '../lib/ui.js';

const TABS = [
  ['chat', 'Chat'],
  ['events', 'Events'],
  ['storage', 'Files, KV, secrets'],
];

export function useSession(sessionId) {
  return useResource(() => api('GET', `/v1/sessions/${sessionId}`), [sessionId], { notFound: 'This session' });
}

export const sessionMissing = (session) => isNotFound(session.failure);

export function SessionNav({ sessionId, current, session }) {
  const label = TABS.find(([name]) => name === current)?.[1] ?? '';
  const name = session.data?.title || (sessionMissing(session) ? 'Unknown session' : 'Session');
  useTitle(`${label} · ${name}`);
  const tab = ([tabName, tabLabel]) =>
    html`<a key=${tabName} class=${current === tabName ? 'active' : ''} aria-current=${current === tabName ? 'page' : undefined} href=${`#/sessions/${sessionId}/${tabName}`}>${tabLabel}</a>`;
  return html`
    <div class="session-head">
      <h1>${name} <span class="visually-hidden">— ${label}</span></h1>
      ${sessionMissing(session)
        ? html`<p class="error" role="alert" data-testid="not-found">Session not found. It may have been deleted, or the link is wrong. <a href="#/sessions">See your sessions</a>.</p>`
        : html`<nav class="tabs session-tabs" aria-label="Session views">${TABS.map(tab)}<code class="muted session-id">${sessionId}</code></nav>`}
    </div>
  `;
}
