import type { EventSubscription, LoggedEvent } from './ports.js';

/** Default cap on live events buffered ahead of a slow reader; beyond it they are re-read from the log. */
export const DEFAULT_MAX_BUFFERED_EVENTS = 10_000;
/** Pause before re-reading when a live event is ahead of what the log returned (replica lag), in ms. */
const GAP_RETRY_MS = 25;

/** What an adapter supplies to turn its log plus its live notifications into one ordered feed. */
export interface FeedSource {
  /** Stored events with sequence > afterSequence, in order; a short page is fine. */
  fetch(afterSequence: number): Promise<LoggedEvent[]>;
  /**
   * Starts live delivery. Pushed events may repeat, arrive late or skip some; the feed
   * repairs that from the log. `stale()` says the log moved without a push (another process
   * appended): the feed re-reads it. `ready` resolves once nothing appended later can be missed.
   */
  listen(push: (event: LoggedEvent) => void, fail: (err: Error) => void, stale: () => void): { stop(): void; ready: Promise<void> };
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

/**
 * Replay-then-live subscription shared by both adapters. Live events are buffered from the
 * moment of construction, the log is read from `afterSequence`, and from then on every event
 * is delivered exactly when its sequence is cursor+1: duplicates are dropped and a jump in
 * sequence triggers a backfill read, so the output is gap-free and in order.
 */
export class OrderedFeed implements EventSubscription<LoggedEvent> {
  readonly #source: FeedSource;
  readonly #maxBuffered: number;
  readonly #listener: { stop(): void; ready: Promise<void> };
  #cursor: number;
  #pollMs: number;
  #pending: LoggedEvent[] = [];
  #wake: ((timedOut: boolean) => void) | null = null;
  #done = false;
  #overflowed = false;
  /** Set by stale(); kept until the loop reads the log, so a hint arriving mid-delivery is not lost. */
  #stale = false;
  #iterated = false;
  #failure: Error | null = null;
  #resolveClosed!: (value: void | Error) => void;
  readonly #closed = new Promise<void | Error>((resolve) => (this.#resolveClosed = resolve));

  constructor(source: FeedSource, afterSequence = 0, maxBuffered = DEFAULT_MAX_BUFFERED_EVENTS) {
    this.#source = source;
    this.#cursor = afterSequence;
    this.#pollMs = source.idlePollMaxMs ?? source.idlePollMs;
    this.#maxBuffered = maxBuffered;
    this.#listener = source.listen(
      (event) => this.#push(event),
      (err) => this.#finish(err),
      () => this.#markStale(),
    );
    // A listener that fails to start ends the feed; the iterator reports it.
    this.#listener.ready.catch((err: unknown) => this.#finish(err instanceof Error ? err : new Error(String(err))));
  }

  close(): void {
    this.#finish(null);
  }

  closed(): Promise<void | Error> {
    return this.#closed;
  }

  [Symbol.asyncIterator](): AsyncIterator<LoggedEvent> {
    if (this.#iterated) throw new Error('EventSubscription can be iterated only once');
    this.#iterated = true;
    return this.#run();
  }

  async *#run(): AsyncGenerator<LoggedEvent> {
    try {
      await this.#listener.ready;
      let readLog = true; // replay first
      let polling = false;
      let backfilledAt = -1;
      while (!this.#done) {
        if (readLog || this.#overflowed || this.#stale) {
          this.#overflowed = false;
          this.#stale = false;
          const page = await this.#source.fetch(this.#cursor);
          // A poll that finds events: pushes were lost (or another process appended), so look again soon.
          if (page.length && polling) this.#pollMs = this.#source.idlePollMs;
          for (const event of page) {
            if (this.#done) break;
            if (event.sequence !== this.#cursor + 1) continue;
            this.#cursor = event.sequence;
            yield event;
          }
          // Keep reading pages until the log has nothing more; then serve the live buffer.
          readLog = page.length > 0;
          polling &&= readLog;
          continue;
        }
        const head = this.#pending.shift();
        if (head === undefined) {
          readLog = polling = await this.#sleep(this.#pollMs);
          if (readLog) this.#pollMs = Math.min(this.#source.idlePollMaxMs ?? this.#pollMs, this.#pollMs * 2);
        } else if (head.sequence === this.#cursor + 1) {
          this.#cursor = head.sequence;
          yield head;
        } else if (head.sequence > this.#cursor + 1) {
          // A gap: the missing events are stored (live only carries stored events), so read
          // them. If a read at this very cursor came back short already (replica lag), wait a bit.
          this.#pending.unshift(head);
          if (backfilledAt === this.#cursor) await this.#sleep(GAP_RETRY_MS);
          backfilledAt = this.#cursor;
          readLog = true;
        }
      }
      if (this.#failure) throw this.#failure;
    } catch (err) {
      // A failed read ends the feed: closed() reports the error, the iterator rethrows it.
      this.#finish(err instanceof Error ? err : new Error(String(err)));
      throw err;
    } finally {
      this.close();
    }
  }

  #push(event: LoggedEvent): void {
    if (this.#done) return;
    this.#pollMs = this.#source.idlePollMs;
    if (this.#pending.length >= this.#maxBuffered) {
      // A slow reader: stop buffering and let it catch up from the log instead.
      this.#pending = [];
      this.#overflowed = true;
    } else {
      this.#pending.push(event);
    }
    this.#wakeUp(false);
  }

  /** The log may have moved without a push (e.g. the bus reconnected): read it now. */
  stale(): void {
    this.#markStale();
  }

  #markStale(): void {
    if (this.#done) return;
    this.#pollMs = this.#source.idlePollMs;
    this.#stale = true;
    this.#wakeUp(true);
  }

  /** Resolves true after `ms` (0 = no timer), false as soon as a push or close wakes it. */
  #sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = ms > 0 ? setTimeout(() => this.#wakeUp(true), ms) : null;
      this.#wake = (timedOut) => {
        if (timer) clearTimeout(timer);
        resolve(timedOut);
      };
    });
  }

  #wakeUp(timedOut: boolean): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.(timedOut);
  }

  #finish(err: Error | null): void {
    if (this.#done) return;
    this.#done = true;
    this.#failure = err;
    this.#pending = [];
    this.#listener?.stop();
    this.#wakeUp(false);
    this.#resolveClosed(err ?? undefined);
  }
}
