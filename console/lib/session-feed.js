// A session's events in log order, each delivered once: the stored history first (GET events,
// paged), then the live SSE stream from the last event seen. Resume rules (docs/operations.md
// section 20): after the service's own `disconnecting` the browser reconnects as the spec's
// `retry:` hint says and sends Last-Event-ID, which the service prefers over the URL's since_id.
// Any other drop (the service stopped, the network went away, an expired token refused) closes
// the EventSource — the browser would otherwise retry every 100–500 ms for ever — and the feed
// reopens it itself with a new token and since_id = the last event it delivered, after a
// jittered backoff (lib/backoff.js). A 404 (no such session) or a refused credential stops the
// feed. Events seen twice are dropped and counted (`duplicates`), so a resume bug shows up
// instead of being rendered.
import { api, ApiError, apiUrl } from './api.js';
import { backoffDelay } from './backoff.js';
import { EVENT_TYPES } from './event-types.js';

const PAGE_SIZE = 1000;
/** Live events are handed over in batches at most this often: one render per batch, not per delta. */
const BATCH_MS = 100;
/** Answers that retrying cannot fix. */
const FINAL = { 401: 'denied', 403: 'denied', 404: 'not_found' };

/**
 * `types`: only these event types (empty: all). `sinceId`: start after this event.
 * `onEvents(events)` gets each new batch; `onState({state, retryAt?, attempt?})` gets the
 * connection state: 'loading', 'connecting', 'live', 'reconnecting', 'offline' (the service
 * cannot be reached), 'not_found' or 'denied' (both final).
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
    onState({ state: 'loading' });
    for (;;) {
      const page = await api('GET', `/v1/sessions/${sessionId}/events`, { query: { since_id: lastId, types, limit: PAGE_SIZE } });
      if (stopped) return;
      accept(page.data);
      if (page.data.length < PAGE_SIZE) return;
    }
  }

  /** A failed call: final answers stop the feed, anything else is retried after a backoff. */
  function failed(err, step) {
    if (stopped) return;
    const final = err instanceof ApiError ? FINAL[err.status] : undefined;
    if (final) {
      stopped = true;
      return onState({ state: final });
    }
    retryLater(step, err instanceof ApiError ? 'reconnecting' : 'offline');
  }

  function retryLater(step, state) {
    if (stopped) return;
    const delay = backoffDelay(attempt++);
    onState({ state, retryAt: Date.now() + delay, attempt });
    timer = setTimeout(step, delay);
  }

  async function connect() {
    if (stopped) return;
    onState({ state: 'connecting' });
    let token;
    try {
      ({ token } = await api('POST', `/v1/sessions/${sessionId}/stream-token`));
    } catch (err) {
      return failed(err, connect);
    }
    if (stopped) return;
    const es = (source = new EventSource(apiUrl(`/v1/sessions/${sessionId}/sse`, { access_token: token, since_id: lastId, types })));
    /** Set by the service's `disconnecting`: the next drop is planned, and the browser may retry once by itself. */
    let planned = false;
    es.addEventListener('connected', () => {
      attempt = 0;
      planned = false;
      onState({ state: 'live' });
    });
    es.addEventListener('disconnecting', () => {
      planned = true;
      onState({ state: 'reconnecting' });
    });
    const onMessage = (msg) => accept([JSON.parse(msg.data)]);
    for (const type of EVENT_TYPES) es.addEventListener(type, onMessage);
    es.onerror = () => {
      if (planned && es.readyState === EventSource.CONNECTING) {
        planned = false; // one reconnect on the spec's hint, with Last-Event-ID; a second drop backs off
        return onState({ state: 'reconnecting' });
      }
      es.close();
      if (source === es) source = null;
      retryLater(connect, 'reconnecting');
    };
  }

  function start() {
    loadHistory().then(connect, (err) => failed(err, start));
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
