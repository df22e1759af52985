// A session's events in log order, each delivered once: the stored history first (GET events,
// paged), then the live SSE stream from the last event seen. Resume rules (docs/operations.md
// section 20): the browser's own reconnects (after `disconnecting` or a network error) send
// Last-Event-ID, which the service prefers over the URL's since_id; when the stream token has
// expired the EventSource closes, and the feed mints a new token and reopens with since_id =
// the last event it delivered. Events seen twice are dropped and counted (`duplicates`), so a
// resume bug shows up instead of being rendered.
import { api, apiUrl } from './api.js';
import { EVENT_TYPES } from './event-types.js';

const PAGE_SIZE = 1000;
const MAX_BACKOFF_MS = 10_000;
/** Live events are handed over in batches at most this often: one render per batch, not per delta. */
const BATCH_MS = 100;

/**
 * `types`: only these event types (empty: all). `sinceId`: start after this event.
 * `onEvents(events)` gets each new batch; `onState(state)` gets 'loading', 'connecting', 'live',
 * 'reconnecting' or 'error: …'.
 */
export function openSessionFeed(sessionId, { types = [], sinceId = null, onEvents, onState = () => {} }) {
  const seen = new Set();
  let lastId = sinceId || null;
  let duplicates = 0;
  let source = null;
  let stopped = false;
  let attempt = 0;
  let timer;
  let pending = [];
  let flushTimer = null;

  function accept(events) {
    for (const e of events) {
      if (seen.has(e.id)) duplicates++;
      else {
        seen.add(e.id);
        pending.push(e);
        lastId = e.id;
      }
    }
    if (pending.length && flushTimer === null) flushTimer = setTimeout(flush, BATCH_MS);
  }

  function flush() {
    flushTimer = null;
    const batch = pending;
    pending = [];
    if (batch.length && !stopped) onEvents(batch);
  }

  async function loadHistory() {
    onState('loading');
    for (;;) {
      const page = await api('GET', `/v1/sessions/${sessionId}/events`, { query: { since_id: lastId, types, limit: PAGE_SIZE } });
      if (stopped) return;
      accept(page.data);
      if (page.data.length < PAGE_SIZE) return;
    }
  }

  function retryLater(step) {
    if (stopped) return;
    timer = setTimeout(step, Math.min(MAX_BACKOFF_MS, 250 * 2 ** attempt++));
  }

  async function connect() {
    if (stopped) return;
    onState('connecting');
    let token;
    try {
      ({ token } = await api('POST', `/v1/sessions/${sessionId}/stream-token`));
    } catch (err) {
      onState(`error: ${err.message}`);
      return retryLater(connect);
    }
    if (stopped) return;
    const es = (source = new EventSource(apiUrl(`/v1/sessions/${sessionId}/sse`, { access_token: token, since_id: lastId, types })));
    es.addEventListener('connected', () => {
      attempt = 0;
      onState('live');
    });
    es.addEventListener('disconnecting', () => onState('reconnecting'));
    const onMessage = (msg) => accept([JSON.parse(msg.data)]);
    for (const type of EVENT_TYPES) es.addEventListener(type, onMessage);
    es.onerror = () => {
      if (es.readyState !== EventSource.CLOSED) return onState('reconnecting'); // the browser retries with Last-Event-ID
      es.close(); // refused (an expired token, a limit): reopen from the last event with a new token
      if (source === es) source = null;
      onState('reconnecting');
      retryLater(connect);
    };
  }

  function start() {
    loadHistory().then(connect, (err) => {
      onState(`error: ${err.message}`);
      retryLater(start);
    });
  }

  start();
  return {
    close() {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(flushTimer);
      source?.close();
    },
    get lastEventId() {
      return lastId;
    },
    get duplicates() {
      return duplicates;
    },
  };
}
