// A session's event timeline: type filters, a start position (since_id), and the live stream
// with resume. Filters and start live in the URL (#/sessions/<id>/events?types=…&since_id=…),
// so a reload shows the same view; the footer shows the position a resume starts from
// (Last-Event-ID) and how many repeated events were dropped (0 unless a resume went wrong).
import { html, useEffect, useRef, useState } from '../vendor/preact-htm.js';
import { openSessionFeed } from '../lib/session-feed.js';
import { EVENT_TYPES } from '../lib/event-types.js';
import { FeedStatus } from '../lib/feed-status.js';
import { when } from '../lib/ui.js';
import { SessionNav, sessionMissing, useSession } from './session-nav.js';

export function Events({ sessionId, query }) {
  const types = (query.get('types') ?? '').split(',').filter((t) => EVENT_TYPES.includes(t));
  const sinceId = query.get('since_id') ?? '';
  const [events, setEvents] = useState([]);
  const session = useSession(sessionId);
  const [feedInfo, setFeedInfo] = useState({ state: 'loading' });
  const [position, setPosition] = useState({ lastId: sinceId, duplicates: 0 });
  const [open, setOpen] = useState(null);
  const feed = useRef(null);

  useEffect(() => {
    const f = (feed.current = openSessionFeed(sessionId, {
      types,
      sinceId,
      onEvents: (batch) => {
        setEvents((prev) => [...prev, ...batch]);
        setPosition({ lastId: f.lastEventId, duplicates: f.duplicates });
      },
      onState: (state) => {
        setFeedInfo(state);
        if (feed.current) setPosition({ lastId: feed.current.lastEventId, duplicates: feed.current.duplicates });
      },
    }));
    return () => f.close();
  }, []);

  const apply = (e) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const q = new URLSearchParams();
    const chosen = f.getAll('types').map(String);
    if (chosen.length && chosen.length < EVENT_TYPES.length) q.set('types', chosen.join(','));
    const since = String(f.get('since_id') ?? '').trim();
    if (since) q.set('since_id', since);
    location.hash = `#/sessions/${sessionId}/events${q.size ? `?${q}` : ''}`;
  };
  const resumeHere = () => (location.hash = `#/sessions/${sessionId}/events?${new URLSearchParams({ ...(types.length ? { types: types.join(',') } : {}), since_id: position.lastId ?? '' })}`);

  if (sessionMissing(session) || feedInfo.state === 'not_found') {
    return html`<section><${SessionNav} sessionId=${sessionId} current="events" session=${session} /></section>`;
  }
  return html`
    <section>
      <${SessionNav} sessionId=${sessionId} current="events" session=${session} />
      <details class="card filters" open=${types.length > 0 || sinceId !== ''}>
        <summary>Filters: ${types.length ? `${types.length} types` : 'all types'}${sinceId ? ', after an event' : ''}</summary>
        <form onSubmit=${apply}>
          <fieldset>
            <legend>Types (none checked: all)</legend>
            ${EVENT_TYPES.map((t) => html`<label class="inline" key=${t}><input type="checkbox" name="types" value=${t} checked=${types.includes(t)} /> ${t}</label>`)}
          </fieldset>
          <label>Start after event id (since_id) <input name="since_id" value=${sinceId} placeholder="from the beginning" /></label>
          <button type="submit">Apply</button>
        </form>
      </details>
      ${feedInfo.state === 'loading' && events.length === 0 && html`<p class="loading" role="status">Loading events…</p>`}
      <ol class="timeline" data-testid="timeline" aria-label="Events">
        ${events.map((e) => html`
          <li key=${e.id} data-event-id=${e.id} data-type=${e.type}>
            <button type="button" class="row" aria-expanded=${String(open === e.id)} onClick=${() => setOpen(open === e.id ? null : e.id)}>
              <span class="seq">#${e.sequence}</span> <code>${e.type}</code> <span class="muted">${when(e.ts)}</span>
            </button>
            ${open === e.id && html`<pre class="event-json">${JSON.stringify(e, null, 2)}</pre>`}
          </li>`)}
      </ol>
      <footer class="muted position">
        Stream: <${FeedStatus} feed=${feedInfo} /> ·
        ${events.length} events ·
        Last-Event-ID: <code data-testid="last-event-id">${position.lastId || '—'}</code> ·
        repeated events dropped: <span data-testid="duplicates">${position.duplicates}</span>
        ${position.lastId && html` · <button class="link" onClick=${resumeHere}>Restart from here</button>`}
      </footer>
    </section>
  `;
}
