// The connection state of a session's live stream, in words, with the countdown to the next
// retry while the service cannot be reached (lib/session-feed.js decides when).
import { html, useEffect, useState } from '../vendor/preact-htm.js';

const TEXT = {
  loading: 'Loading history…',
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Connection lost — reconnecting',
  offline: 'Service unreachable — retrying',
  not_found: 'Session not found',
  denied: 'Access refused — sign in again',
};

export function feedStatusText({ state, retryAt }, now = Date.now()) {
  const base = TEXT[state] ?? state;
  if (!retryAt || (state !== 'reconnecting' && state !== 'offline')) return base;
  const s = Math.max(0, Math.ceil((retryAt - now) / 1000));
  return s > 0 ? `${base} in ${s} s` : `${base}…`;
}

export function FeedStatus({ feed }) {
  const [, tick] = useState(0);
  useEffect(() => {
    if (!feed.retryAt) return;
    const t = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, [feed.retryAt]);
  return html`<span class=${`feed-state ${feed.state}`} data-testid="feed-state" data-state=${feed.state} role="status">${feedStatusText(feed)}</span>`;
}
