import { ensureError } from '../errors.js';
import { TimerWheel, type TimerTarget } from '../timers/index.js';
import type { EventSink, FeedHandle, LoggedEvent } from './ports.js';

/** Default cap on live events buffered ahead of a slow sink; beyond it they are re-read from the log. */
export const DEFAULT_MAX_BUFFERED_EVENTS = 10_000;
/** Pause before re-reading when a live event is ahead of what the log returned (replica lag), in ms. */
const GAP_RETRY_MS = 25;

/** Where an adapter's live notifications go: the feed of one session. */
export interface LiveInput {
  /** A live event; it may repeat, arrive late or skip some: the feed repairs that from the log. */
  push(event: LoggedEvent): void;
  /** Live delivery broke: the feed ends with this error. */
  fail(err: Error): void;
  /** The log moved without a push (another process appended): the feed re-reads it. */
  stale(): void;
}

/** What an adapter supplies to turn its log plus its live notifications into ordered feeds. */
export interface FeedSource {
  /** Stored events of the session with sequence > afterSequence, in order; a short page is fine. */
  fetch(sessionId: string, afterSequence: number): Promise<LoggedEvent[]>;
  /** Starts live delivery of the session to `input`; `ready` resolves once nothing appended later can be missed. */
  listen(sessionId: string, input: LiveInput): { stop(): void; ready: Promise<void> };
  /** Re-read the log after this long without a push (a cross-process or lost-message backstop), in ms; 0 = never. */
  idlePollMs: number;
  /**
   * When set, a feed polls this rarely (ms) until something comes live; after a push, stale() or
   * a poll that found events it polls idlePollMs later, then doubles the wait while the polls
   * find nothing. A lost event is usually the last of a burst, caught idlePollMs after it; a
   * session idle for minutes has nothing to lose, and at tens of thousands of watched sessions
   * a fixed 5 s poll is most of an idle instance's CPU.
   */
  idlePollMaxMs?: number;
}

export interface FeedGroupOptions {
  /** Live events buffered per feed while its sink holds it (default 10,000). */
  maxBuffered: number;
}

/**
 * The feeds of one event log: they share the source, one poll wheel (one interval for every
 * feed's idle poll, not a `Timeout` each) and reconnect handling (`staleAll`).
 */
export class FeedGroup {
  readonly source: FeedSource;
  readonly maxBuffered: number;
  readonly wheel: TimerWheel | null;
  readonly feeds = new Set<OrderedFeed>();

  constructor(source: FeedSource, { maxBuffered = DEFAULT_MAX_BUFFERED_EVENTS }: Partial<FeedGroupOptions> = {}) {
    this.source = source;
    this.maxBuffered = maxBuffered;
    this.wheel = source.idlePollMs > 0 ? new TimerWheel({ shortestMs: source.idlePollMs }) : null;
  }

  /** A feed of the session's events after `afterSequence`, delivered to `sink`. */
  open(sessionId: string, sink: EventSink<LoggedEvent>, afterSequence = 0): OrderedFeed {
    return new OrderedFeed(this, sessionId, sink, afterSequence);
  }

  closeAll(): void {
    for (const feed of this.feeds) feed.close();
  }

  /** After a reconnect: live messages sent meanwhile are gone, so every feed re-reads the log. */
  staleAll(): void {
    for (const feed of this.feeds) feed.stale();
  }
}

/** What one step of a feed did: go on, wait for nothing (idle), or wait for a read, a timer or the sink. */
type Step = 'more' | 'idle' | 'wait';

/**
 * Replay-then-live feed shared by both adapters, pushed to a sink. Live events are buffered from
 * the moment of construction, the log is read from `afterSequence`, and from then on every event
 * is delivered exactly when its sequence is cursor+1: duplicates are dropped and a jump in
 * sequence triggers a backfill read, so the output is gap-free and in order. An idle feed is a
 * plain object on its group's poll wheel: no pending promise, generator or timer of its own.
 */
export class OrderedFeed implements FeedHandle, LiveInput, TimerTarget {
  readonly #group: FeedGroup;
  readonly #sessionId: string;
  readonly #sink: EventSink<LoggedEvent>;
  readonly #stop: () => void;
  #cursor: number;
  #pollMs: number;
  /** Wheel bucket of the pending idle poll; 0 = none. */
  #pollKey = 0;
  /** Live events not yet delivered; null while none came (an idle feed holds no array). */
  #pending: LoggedEvent[] | null = null;
  /** A page read from the log, being delivered from `#pageAt`. */
  #page: LoggedEvent[] | null = null;
  #pageAt = 0;
  #readLog = true; // replay first
  /** The read in flight (or the page being delivered) was an idle poll's. */
  #polling = false;
  #backfilledAt = -1;
  #overflowed = false;
  /** Set by stale(); kept until the feed reads the log, so a hint arriving mid-delivery is not lost. */
  #stale = false;
  /** A step loop runs, or the feed waits on a read, a timer or the sink (until the listener is ready, too). */
  #busy = true;
  #done = false;

  constructor(group: FeedGroup, sessionId: string, sink: EventSink<LoggedEvent>, afterSequence: number) {
    this.#group = group;
    this.#sessionId = sessionId;
    this.#sink = sink;
    this.#cursor = afterSequence;
    this.#pollMs = group.source.idlePollMaxMs ?? group.source.idlePollMs;
    const listener = group.source.listen(sessionId, this);
    this.#stop = listener.stop;
    group.feeds.add(this);
    // A listener that fails to start ends the feed; the sink hears of it.
    listener.ready.then(
      () => this.#resume(),
      (err: unknown) => this.#finish(ensureError(err)),
    );
  }

  close(): void {
    this.#finish(null);
  }

  push(event: LoggedEvent): void {
    if (this.#done) return;
    this.#pollMs = this.#group.source.idlePollMs;
    if (this.#pending === null) {
      this.#pending = [event];
    } else if (this.#pending.length >= this.#group.maxBuffered) {
      // A slow sink: stop buffering and let it catch up from the log instead.
      this.#pending = null;
      this.#overflowed = true;
    } else {
      this.#pending.push(event);
    }
    this.#wake();
  }

  fail(err: Error): void {
    this.#finish(err);
  }

  /** The log may have moved without a push (e.g. the bus reconnected): read it now. */
  stale(): void {
    if (this.#done) return;
    this.#pollMs = this.#group.source.idlePollMs;
    this.#stale = true;
    this.#wake();
  }

  /** The idle poll is due (the wheel calls this only while the feed is idle: any wake cancels it). */
  onTimer(): void {
    this.#pollKey = 0;
    if (this.#done || this.#busy) return;
    this.#readLog = this.#polling = true;
    this.#pollMs = Math.min(this.#group.source.idlePollMaxMs ?? this.#pollMs, this.#pollMs * 2);
    this.#advance();
  }

  #wake(): void {
    this.#cancelPoll();
    this.#advance();
  }

  #resume(): void {
    this.#busy = false;
    this.#advance();
  }

  /** Delivers what it can now; stops when idle (then schedules the idle poll) or waiting. */
  #advance(): void {
    if (this.#busy || this.#done) return;
    this.#busy = true;
    let step: Step = 'more';
    try {
      while (step === 'more' && !this.#done) step = this.#step();
    } catch (err) {
      // The sink threw: the feed ends with that error.
      return this.#finish(ensureError(err));
    }
    if (step === 'wait') return;
    this.#busy = false;
    if (step === 'idle') this.#schedulePoll();
  }

  #step(): Step {
    if (this.#page) return this.#stepPage(this.#page);
    if (this.#readLog || this.#overflowed || this.#stale) {
      this.#overflowed = this.#stale = false;
      this.#fetch();
      return 'wait';
    }
    const head = this.#pending?.shift();
    if (head === undefined) {
      this.#pending = null;
      return 'idle';
    }
    if (head.sequence === this.#cursor + 1) return this.#deliver(head);
    if (head.sequence > this.#cursor + 1) {
      // A gap: the missing events are stored (live only carries stored events), so read
      // them. If a read at this very cursor came back short already (replica lag), wait a bit.
      this.#pending!.unshift(head);
      const again = this.#backfilledAt === this.#cursor;
      this.#backfilledAt = this.#cursor;
      this.#readLog = true;
      if (again) {
        setTimeout(() => this.#resume(), GAP_RETRY_MS);
        return 'wait';
      }
    }
    return 'more'; // a duplicate or stale live event is dropped
  }

  #stepPage(page: LoggedEvent[]): Step {
    if (this.#pageAt < page.length) {
      const event = page[this.#pageAt++]!;
      return event.sequence === this.#cursor + 1 ? this.#deliver(event) : 'more';
    }
    // Keep reading pages until the log has nothing more; then serve the live buffer.
    this.#page = null;
    this.#readLog = page.length > 0;
    this.#polling &&= this.#readLog;
    return 'more';
  }

  #deliver(event: LoggedEvent): Step {
    this.#cursor = event.sequence;
    const held = this.#sink.event(event);
    if (!held) return 'more';
    held.then(
      () => this.#resume(),
      (err: unknown) => this.#finish(ensureError(err)),
    );
    return 'wait';
  }

  #fetch(): void {
    this.#group.source.fetch(this.#sessionId, this.#cursor).then(
      (page) => {
        // A poll that finds events: pushes were lost (or another process appended), so look again soon.
        if (page.length && this.#polling) this.#pollMs = this.#group.source.idlePollMs;
        this.#page = page;
        this.#pageAt = 0;
        this.#resume();
      },
      // A failed read ends the feed: the sink hears the error.
      (err: unknown) => this.#finish(ensureError(err)),
    );
  }

  #schedulePoll(): void {
    const wheel = this.#group.wheel;
    if (!wheel || this.#pollMs <= 0) return;
    this.#cancelPoll();
    this.#pollKey = wheel.schedule(this, wheel.now() + this.#pollMs);
  }

  #cancelPoll(): void {
    if (this.#pollKey === 0) return;
    this.#group.wheel?.cancel(this, this.#pollKey);
    this.#pollKey = 0;
  }

  #finish(err: Error | null): void {
    if (this.#done) return;
    this.#done = true;
    this.#pending = null;
    this.#page = null;
    this.#cancelPoll();
    this.#stop();
    this.#group.feeds.delete(this);
    this.#sink.end(err);
  }
}
