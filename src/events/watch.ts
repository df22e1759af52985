/**
 * One watched session on this instance: its clients, its recent frames, its feed. Sized for
 * the idle case (issue 28): at one follower per session there is a watch per stream, so an
 * idle watch is this object, one client, its feed and its ring of the frames it has seen.
 */
import type { SessionEvent } from '../../schemas/events.js';
import type { EventSink, FeedHandle } from '../bus/index.js';
import type { SseStream } from '../http/index.js';
import type { EventFilter } from './event-filter.js';
import { FrameRing, type Frame } from './frame-ring.js';

/**
 * Frames kept per watched session so a reconnect after cycling, and every client after the
 * first to replay a session's history, is served from memory.
 */
const RING_SIZE = 512;
/** …and at most this much frame text (UTF-16 code units), so large events do not pin megabytes per session. */
const RING_MAX_CHARS = 512 * 1024;

export interface Client {
  stream: SseStream;
  filter: EventFilter | null;
  /** Last sequence this client has been sent (or skipped by its filter). */
  cursor: number;
  live: boolean;
}

/** A watch's feed until it follows the session (set in the same tick). */
const CLOSED_FEED: FeedHandle = { close: () => undefined };

/** What a watch's feed calls back into: the hub's functions, shared by every watch. */
export interface WatchOwner {
  publish(w: Watch, event: SessionEvent): void;
  feedEnded(w: Watch, err: Error | null): void;
}

const NO_CLIENTS: readonly Client[] = [];

/**
 * It is its own feed's sink (methods on the prototype): an idle watched session holds no
 * closures of its own.
 */
export class Watch implements EventSink<SessionEvent> {
  /** None, one, or a Set from the second client on: a Set with its table is ~160 bytes, and most watches have one client. */
  #clients: Client | Set<Client> | null = null;
  /** Made on the first frame pushed or replayed: a session with no events yet holds none. */
  ring: FrameRing | undefined;
  /** Log reads in flight by start position: clients resuming from the same point share one (made on the first, dropped when none is left). */
  replays: Map<number, Promise<Frame[]>> | undefined;
  feed: FeedHandle = CLOSED_FEED;
  /** Failures of the feed since its last event (retried with retryPolicies.sessionFeed). */
  failures = 0;
  unwatchTimer: NodeJS.Timeout | undefined;
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

  /**
   * The clients to iterate now. A Set may lose or gain members while it is iterated (a write
   * that fails closes its stream); one added meanwhile is not live yet, so it is not missed.
   */
  get clients(): Iterable<Client> {
    const c = this.#clients;
    return c instanceof Set ? c : c ? [c] : NO_CLIENTS;
  }

  get clientCount(): number {
    const c = this.#clients;
    return c instanceof Set ? c.size : c ? 1 : 0;
  }

  addClient(client: Client): void {
    const c = this.#clients;
    if (c === null) this.#clients = client;
    else if (c instanceof Set) c.add(client);
    else this.#clients = new Set([c, client]);
  }

  removeClient(client: Client): void {
    const c = this.#clients;
    if (c === client) this.#clients = null;
    else if (c instanceof Set && c.delete(client) && c.size === 0) this.#clients = null;
  }

  /** Forgets the read started at `after` once it settled; the map goes with the last one. */
  replayDone(after: number): void {
    if (this.replays?.delete(after) && this.replays.size === 0) this.replays = undefined;
  }
}
