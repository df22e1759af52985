import type { EventSink, EventSubscription, FeedHandle, LoggedEvent } from './ports.js';

/**
 * The async-iterator face of a followed feed (EventReader.subscribe over EventReader.follow):
 * an event the consumer has not asked for yet holds the feed (the sink's promise), so a slow
 * consumer is handled by the feed's buffer and its overflow re-read, as for any sink.
 */
export function iterateFeed<E extends LoggedEvent>(follow: (sink: EventSink<E>) => FeedHandle): EventSubscription<E> {
  return new FeedIterator(follow);
}

type Pull<E> = { resolve(result: IteratorResult<E>): void; reject(err: Error): void };

class FeedIterator<E extends LoggedEvent> implements EventSubscription<E>, EventSink<E> {
  readonly #handle: FeedHandle;
  /** Delivered by the feed, not yet taken by the consumer; `release` lets the feed go on. */
  #held: { event: E; release: () => void } | null = null;
  /** The consumer's next(), waiting for an event. */
  #pull: Pull<E> | null = null;
  #ended = false;
  /** The error the feed ended with, until the consumer has been told. */
  #failure: Error | null = null;
  #iterated = false;
  #resolveClosed!: (value: void | Error) => void;
  readonly #closed = new Promise<void | Error>((resolve) => (this.#resolveClosed = resolve));

  constructor(follow: (sink: EventSink<E>) => FeedHandle) {
    this.#handle = follow(this);
  }

  close(): void {
    this.#handle.close();
  }

  closed(): Promise<void | Error> {
    return this.#closed;
  }

  [Symbol.asyncIterator](): AsyncIterator<E> {
    if (this.#iterated) throw new Error('EventSubscription can be iterated only once');
    this.#iterated = true;
    return {
      next: () => this.#next(),
      // `break` out of a for await: the feed is closed.
      return: () => {
        this.close();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  event(event: E): void | Promise<void> {
    const pull = this.#pull;
    if (pull) {
      this.#pull = null;
      pull.resolve({ done: false, value: event });
      return;
    }
    return new Promise((release) => (this.#held = { event, release }));
  }

  end(err: Error | null): void {
    this.#ended = true;
    this.#failure = err;
    this.#held = null; // not taken yet: dropped with the feed's buffer
    const pull = this.#pull;
    this.#pull = null;
    if (pull) this.#settleEnded(pull);
    this.#resolveClosed(err ?? undefined);
  }

  #next(): Promise<IteratorResult<E>> {
    const held = this.#held;
    if (held) {
      this.#held = null;
      held.release();
      return Promise.resolve({ done: false, value: held.event });
    }
    return new Promise((resolve, reject) => {
      const pull = { resolve, reject };
      if (this.#ended) this.#settleEnded(pull);
      else this.#pull = pull;
    });
  }

  /** Ends the iteration: with the feed's error the first time (a failed feed rethrows once), done after. */
  #settleEnded(pull: Pull<E>): void {
    const failure = this.#failure;
    this.#failure = null;
    if (failure) pull.reject(failure);
    else pull.resolve({ done: true, value: undefined });
  }
}
