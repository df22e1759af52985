// The console's shell: who is signed in, the navigation, and a hash router (#/agents,
// #/sessions/<id>/chat, …) that picks one view; each view lives in its own file under views/.
import { html, render, useEffect, useState } from './vendor/preact-htm.js';
import { ApiError, hasCredential, signOut, whoAmI } from './lib/api.js';
import { humanError } from './lib/errors.js';
import { SignIn } from './views/signin.js';
import { Agents } from './views/agents.js';
import { AgentEditor } from './views/agent-editor.js';
import { AgentImport } from './views/agent-import.js';
import { Sessions } from './views/sessions.js';
import { Chat } from './views/chat.js';
import { Events } from './views/events.js';
import { Storage } from './views/storage.js';
import { Admin } from './views/admin.js';
import { Webhooks } from './views/webhooks.js';

/** Route table: a hash pattern and the view it shows (`:name` segments become props). */
const ROUTES = [
  ['agents', Agents],
  ['agents/new', AgentEditor],
  ['agents/import', AgentImport],
  ['agents/:agentId', AgentEditor],
  ['sessions', Sessions],
  ['sessions/:sessionId/chat', Chat],
  ['sessions/:sessionId/events', Events],
  ['sessions/:sessionId/storage', Storage],
  ['admin', Admin],
  ['webhooks', Webhooks],
];

function matchRoute(hash) {
  const [path, query = ''] = hash.replace(/^#\/?/, '').split('?');
  const parts = path.split('/').filter(Boolean);
  for (const [pattern, view] of ROUTES) {
    const segs = pattern.split('/');
    if (segs.length !== parts.length) continue;
    const params = {};
    if (segs.every((s, i) => (s.startsWith(':') ? ((params[s.slice(1)] = decodeURIComponent(parts[i])), true) : s === parts[i]))) {
      return { view, params: { ...params, query: new URLSearchParams(query) } };
    }
  }
  return { view: Sessions, params: { query: new URLSearchParams() } };
}

function useHash() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}

function App() {
  const hash = useHash();
  const [me, setMe] = useState(null);
  const [checking, setChecking] = useState(hasCredential());
  const [error, setError] = useState('');

  useEffect(() => {
    if (!hasCredential()) return;
    whoAmI()
      .then(setMe, (err) => setError(err instanceof ApiError && err.status === 401 ? 'Your credential is no longer valid; sign in again.' : humanError(err)))
      .finally(() => setChecking(false));
  }, []);

  if (checking) return html`<p class="boot">Checking your credential…</p>`;
  if (!me) return html`<${SignIn} notice=${error} onSignedIn=${setMe} />`;

  const { view: View, params } = matchRoute(hash);
  const isAdmin = me.user.role === 'admin';
  const section = hash.replace(/^#\/?/, '').split(/[/?]/)[0] || 'sessions';
  const link = (name, label) => html`<a href=${`#/${name}`} aria-current=${section === name ? 'page' : undefined} class=${section === name ? 'active' : ''}>${label}</a>`;
  const logout = async () => {
    await signOut();
    setMe(null);
  };
  return html`
    <header class="top">
      <strong>Agent Session Service</strong>
      <nav aria-label="Main">
        ${link('agents', 'Agents')}
        ${link('sessions', 'Sessions')}
        ${isAdmin && link('admin', 'Providers & models')}
        ${isAdmin && link('webhooks', 'Webhooks')}
      </nav>
      <span class="who" data-testid="who">${me.user.email} (${me.user.role}, ${me.organization.name})</span>
      <button class="link" onClick=${logout}>Sign out</button>
    </header>
    <main><${View} key=${hash} me=${me} ...${params} /></main>
  `;
}

const root = document.getElementById('app');
root.textContent = ''; // the boot message
render(html`<${App} />`, root);
