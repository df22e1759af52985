import type { SessionEvent } from '../../schemas/events.js';
import type { BusReader, EventSink, FeedHandle } from '../bus/index.js';
import { formatSseFrame } from '../http/index.js';
import { flowingFrame, type SseStream } from '../http/index.js';
import type { Logger } from '../log.js';
import { pauseMs, retry, retryPolicies } from '../retry/index.js';
import { passesFilter, type EventFilter } from './event-filter.js';
import { FrameRing, type Frame } from './frame-ring.js';

/**
 * Frames kept per watched session so a reconnect after cycling, and every client after the
 * first to replay a session's history, is served from memory.
 */
const RING_SIZE = 512;
/** …and at most this much frame text (UTF-16 code units), so large events do not pin megabytes per session. */
const RING_MAX_CHARS = 512 * 1024;
/** How long a session stays watched after its last client left (absorbs reconnects), in ms. */
const UNWATCH_GRACE_MS = 5_000;
const REPLAY_PAGE = 500;
/** A replay read serialises at most about this much frame text (UTF-16 units); the client's next read goes on from there. */
const REPLAY_MAX_CHARS = 4 * 1024 * 1024;

interface Client {
  stream: SseStream;
  filter: EventFilter | null;
  /** Last sequence this client has been sent (or skipped by its filter). */
  cursor: number;
  live: boolean;
}

/** A watch's feed until it follows the session (set in the same tick). */
const CLOSED_FEED: FeedHandle = { close: () => undefined };

/** What a watch's feed calls back into: the hub's functions, shared by every watch. */
interface WatchOwner {
  publish(w: Watch, event: SessionEvent): void;
  feedEnded(w: Watch, err: Error | null): void;
}

/**
 * One watched session. It is its own feed's sink (methods on the prototype): an idle watched
 * session holds no closures of its own, and at one follower per session there is a watch per stream.
 */
class Watch implements EventSink<SessionEvent> {
  readonly clients = new Set<Client>();
  /** Made on the first frame pushed or replayed: a session with no events yet holds none. */
  ring: FrameRing | undefined;
  /** Log reads in flight by start position: clients resuming from the same point share one (made on the first). */
  replays?: Map<number, Promise<Frame[]>>;
  feed: FeedHandle = CLOSED_FEED;
  /** Failures of the feed since its last event (retried with retryPolicies.sessionFeed). */
  failures = 0;
  unwatchTimer?: NodeJS.Timeout;
  dropped = false;

  constructor(
    readonly sessionId: string,
    public lastSequence: number,
    readonly owner: WatchOwner,
  ) {}

  event(event: SessionEvent): void {
    this.owner.publish(this, event);
    this.failures = 0;
  }

  end(err: Error | null): void {
    this.owner.feedEnded(this, err);
  }

  ringFor(): FrameRing {
    return (this.ring ??= new FrameRing(RING_SIZE, RING_MAX_CHARS));
  }
}

export interface AttachOptions {
  afterSequence: number;
  filter: EventFilter | null;
}

/**
 * Per-instance SSE fan-out: one bus subscription per watched session, however many clients watch
 * it; each event is serialised to a frame once and written to every interested client.
 */
export function createSessionHub({ bus, log }: { bus: BusReader<SessionEvent>; log: Logger }) {
  // The watch itself once open (a promise only while its tail is read): no settled promise kept per session.
  const watches = new Map<string, Watch | Promise<Watch>>();
  // One subscription for every session's deletion, not one per watched session (NATS interest and memory per stream).
  const stopDeletions = bus.signals.subscribeType('deleted', (s) => closeSession(s.session_id));

  function watch(sessionId: string): Watch | Promise<Watch> {
    const known = watches.get(sessionId);
    if (known) return known;
    const opening = openWatch(sessionId).then(
      (w) => {
        // Still ours unless the session was deleted or the hub closed meanwhile (the watch is dropped then).
        if (watches.get(sessionId) === opening && !w.dropped) watches.set(sessionId, w);
        return w;
      },
      (err: unknown) => {
        if (watches.get(sessionId) === opening) watches.delete(sessionId);
        throw err;
      },
    );
    watches.set(sessionId, opening);
    return opening;
  }

  /**
   * Log reads behind attach (the tail, replay pages) are retried a few times: a transient failure
   * (a read timing out under load) would otherwise reset every stream waiting on it.
   */
  function withRetries<T>(sessionId: string, what: string, fn: () => Promise<T>): Promise<T> {
    return retry(fn, retryPolicies.sessionFeed, {
      onRetry: ({ err, attempt }) => log.warn({ err, sessionId, attempt }, `${what} failed; retrying`),
    });
  }

  async function openWatch(sessionId: string): Promise<Watch> {
    const lastSequence = await withRetries(sessionId, 'reading the session tail', () => bus.events.lastSequence(sessionId));
    const w = new Watch(sessionId, lastSequence, owner);
    follow(w);
    return w;
  }

  /**
   * Follows the session from the last event published to its clients: pushed, so an idle
   * watched session costs no pending promise or timer of its own (bus/ordered-feed.ts).
   */
  function follow(w: Watch): void {
    w.feed = bus.events.follow(w.sessionId, w, { afterSequence: w.lastSequence });
  }

  /** A failed feed is reopened a few times; a closed one (the watch dropped, the session deleted, the bus closed) is not. */
  function feedEnded(w: Watch, err: Error | null): void {
    if (err && !w.dropped && ++w.failures < retryPolicies.sessionFeed.maxAttempts) {
      log.warn({ err, sessionId: w.sessionId, attempt: w.failures }, 'session event subscription failed; reopening it');
      setTimeout(() => reopen(w), pauseMs(retryPolicies.sessionFeed.backoff, w.failures));
      return;
    }
    if (err) log.warn({ err, sessionId: w.sessionId }, 'session event subscription failed; clients will reconnect');
    resetClients(w);
  }

  function reopen(w: Watch): void {
    if (w.dropped) return resetClients(w);
    try {
      follow(w);
    } catch (err) {
      log.warn({ err, sessionId: w.sessionId }, 'session event subscription failed; clients will reconnect');
      resetClients(w);
    }
  }

  /** The feed ended for good: clients reconnect and resume with since_id. */
  function resetClients(w: Watch): void {
    for (const c of w.clients) c.stream.disconnect('stream_reset');
    drop(w);
  }

  function publish(w: Watch, event: SessionEvent): void {
    if (event.sequence <= w.lastSequence) return;
    w.lastSequence = event.sequence;
    const frame = toFrame(event);
    w.ringFor().push(frame);
    for (const c of w.clients) if (c.live) deliver(c, frame);
  }

  const owner: WatchOwner = { publish, feedEnded };

  async function attach(sessionId: string, stream: SseStream, { afterSequence, filter }: AttachOptions): Promise<void> {
    const w = await watch(sessionId);
    clearTimeout(w.unwatchTimer);
    const client: Client = { stream, filter, cursor: afterSequence, live: false };
    w.clients.add(client);
    stream.onClose(() => detach(w, client));
    // Replay until caught up with the live feed; no await between the last check and going live.
    while (stream.open && client.cursor < w.lastSequence) {
      for (const f of await replayFrames(w, client.cursor)) deliver(client, f);
    }
    client.live = true;
  }

  function replayFrames(w: Watch, after: number): Frame[] | Promise<Frame[]> {
    const cached = w.ring?.after(after);
    if (cached) return cached;
    let read = w.replays?.get(after);
    if (!read) {
      // Up to the tail the watch knows, no further: later events come live (and the bus answers a
      // read within a tail it knows from memory when it appended those events).
      const limit = Math.max(1, Math.min(REPLAY_PAGE, w.lastSequence - after));
      read = withRetries(w.sessionId, 'replay read', () => bus.events.read(w.sessionId, { afterSequence: after, limit }))
        .then((events) => {
          // Deltas carry the text so far: 500 of a long reply would be hundreds of MB of frames at once.
          const frames: Frame[] = [];
          let chars = 0;
          for (const e of events) {
            if (chars >= REPLAY_MAX_CHARS) break;
            const f = toFrame(e);
            frames.push(f);
            chars += f.text.length;
          }
          // Kept when it joins what the ring holds, so the session's next clients skip the read.
          if (frames.length) w.ringFor().prepend(frames, w.lastSequence);
          return frames;
        })
        .finally(() => w.replays?.delete(after));
      (w.replays ??= new Map()).set(after, read);
    }
    return read;
  }

  /** The sequence of a recent event of a session watched here, from memory; undefined when not kept. */
  async function recentSequence(sessionId: string, eventId: string): Promise<number | undefined> {
    const w = watches.get(sessionId);
    return w ? (await Promise.resolve(w).catch(() => undefined))?.ring?.sequenceOf(eventId) : undefined;
  }

  function deliver(c: Client, f: Frame): void {
    if (f.sequence <= c.cursor) return;
    c.cursor = f.sequence;
    if (passesFilter(c.filter, f)) c.stream.sendFlowing(f.text);
  }

  function detach(w: Watch, c: Client): void {
    w.clients.delete(c);
    if (w.clients.size === 0 && !w.dropped) {
      clearTimeout(w.unwatchTimer);
      w.unwatchTimer = setTimeout(() => w.clients.size === 0 && drop(w), UNWATCH_GRACE_MS).unref();
    }
  }

  function drop(w: Watch): void {
    // Once only: a later call must not remove a newer watch of the same session from the map.
    if (w.dropped) return;
    w.dropped = true;
    clearTimeout(w.unwatchTimer);
    w.feed.close();
    watches.delete(w.sessionId);
  }

  /** Ends every local stream of a deleted session. */
  function closeSession(sessionId: string): void {
    const w = watches.get(sessionId);
    if (!w) return;
    void Promise.resolve(w).then(
      (open) => {
        for (const c of [...open.clients]) c.stream.end();
        drop(open);
      },
      () => undefined,
    );
  }

  return {
    attach,
    recentSequence,
    closeSession,
    /** Sessions watched on this instance (one bus subscription each). */
    watchedCount: () => watches.size,
    close(): void {
      stopDeletions();
      for (const w of watches.values()) void Promise.resolve(w).then(drop, () => undefined);
    },
  };
}

function toFrame(event: SessionEvent): Frame {
  const text = flowingFrame(formatSseFrame({ id: event.id, event: event.type, data: JSON.stringify(event) }));
  const frame: Frame = { id: event.id, sequence: event.sequence, type: event.type, text };
  if (event.tags?.length) frame.tags = event.tags;
  return frame;
}

export type SessionHub = ReturnType<typeof createSessionHub>;
