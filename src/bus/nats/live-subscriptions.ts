import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { LiveInput } from '../ordered-feed.js';
import type { LoggedEvent } from '../ports.js';
import { liveShardSubject, sessionSubjects } from './topology.js';

/** Default watched sessions of one shard from which its live events come through one wildcard subscription. */
export const DEFAULT_LIVE_WILDCARD_MIN_SESSIONS = 1_000;
/** A flush cut by a disconnect is tried again after this, in ms (a switch's clean-up waits for one). */
const FLUSH_RETRY_MS = 1_000;

export interface LiveSubscriptionsOptions {
  nc: NatsConnection;
  shards: number;
  /**
   * From this many watched sessions of a shard on, its live events come through one `live.<k>.*`
   * subscription, and back through one per session below half of it; 0 = always one per session.
   */
  wildcardMinSessions: number;
  /** Reads a live message of a watched session; undefined skips it. */
  decode(sessionId: string, msg: Msg): LoggedEvent | undefined;
}

/** The live subscriptions of an event log: where each republished event goes (decision 0104). */
export class LiveSubscriptions {
  readonly #o: LiveSubscriptionsOptions;
  readonly #shards: ShardLive[] = [];

  constructor(o: LiveSubscriptionsOptions) {
    if (!Number.isInteger(o.wildcardMinSessions) || o.wildcardMinSessions < 0)
      throw new RangeError('wildcardMinSessions must be an integer >= 0');
    this.#o = o;
  }

  /** Live delivery of a session to `input`; `ready` resolves once the server has a subscription that covers it. */
  listen(sessionId: string, input: LiveInput): { stop(): void; ready: Promise<void> } {
    const where = sessionSubjects(sessionId, this.#o.shards);
    const shard = (this.#shards[where.shard] ??= new ShardLive(this.#o, where.shard));
    return shard.add(sessionId, where.live, input);
  }
}

/** A session's inputs: one (the usual case: an instance shares one feed per session) or several. */
type Inputs = LiveInput | LiveInput[];

/**
 * The live subscriptions of one shard. A switch subscribes the new way first and drops the old
 * one only once a flush shows the server has the new SUB, so no event falls between the two; an
 * event that comes both ways meanwhile is a duplicate the ordered feed drops (its cursor).
 */
class ShardLive {
  readonly #o: LiveSubscriptionsOptions;
  readonly #wildcardSubject: string;
  readonly #inputs = new Map<string, Inputs>();
  /** One per watched session while the shard is off its wildcard (and for a moment after a switch). */
  readonly #subs = new Map<string, Subscription>();
  #wildcard: Subscription | null = null;
  /** Resolves once the server has the wildcard's SUB; null until asked, or after a flush a disconnect cut. */
  #wildcardFlush: Promise<void> | null = null;
  #onWildcard = false;
  /** Counts switches: a clean-up runs only if no switch came after the one that scheduled it. */
  #epoch = 0;

  constructor(o: LiveSubscriptionsOptions, shard: number) {
    this.#o = o;
    this.#wildcardSubject = liveShardSubject(shard);
  }

  add(sessionId: string, subject: string, input: LiveInput): { stop(): void; ready: Promise<void> } {
    const had = this.#inputs.get(sessionId);
    this.#inputs.set(sessionId, had === undefined ? input : Array.isArray(had) ? [...had, input] : [had, input]);
    const stop = () => this.#remove(sessionId, input);
    const min = this.#o.wildcardMinSessions;
    if (!this.#onWildcard && min > 0 && this.#inputs.size >= min) this.#toWildcard();
    // On the wildcard a joining session is covered as soon as the wildcard's SUB is (at once, usually).
    if (this.#onWildcard) return { stop, ready: this.#wildcardReady() };
    if (!this.#subs.has(sessionId)) this.#subs.set(sessionId, this.#subscribeSession(sessionId, subject));
    return { stop, ready: this.#o.nc.flush() };
  }

  #remove(sessionId: string, input: LiveInput): void {
    const had = this.#inputs.get(sessionId);
    if (Array.isArray(had)) {
      const rest = had.filter((i) => i !== input);
      this.#inputs.set(sessionId, rest.length === 1 ? rest[0]! : rest);
      return;
    }
    if (had !== input) return;
    this.#inputs.delete(sessionId);
    this.#subs.get(sessionId)?.unsubscribe();
    this.#subs.delete(sessionId);
    if (this.#onWildcard && this.#inputs.size < this.#o.wildcardMinSessions / 2) this.#toSessions();
  }

  #toWildcard(): void {
    const epoch = ++this.#epoch;
    this.#onWildcard = true;
    this.#wildcard ??= this.#o.nc.subscribe(this.#wildcardSubject, {
      callback: (err, msg) => (err ? this.#wildcardFailed(err) : this.#dispatch(msg)),
    });
    this.#afterFlush(() => {
      if (epoch !== this.#epoch) return;
      for (const sub of this.#subs.values()) sub.unsubscribe();
      this.#subs.clear();
    });
  }

  #toSessions(): void {
    const epoch = ++this.#epoch;
    this.#onWildcard = false;
    for (const sessionId of this.#inputs.keys())
      if (!this.#subs.has(sessionId))
        this.#subs.set(sessionId, this.#subscribeSession(sessionId, sessionSubjects(sessionId, this.#o.shards).live));
    this.#afterFlush(() => {
      if (epoch !== this.#epoch) return;
      this.#wildcard?.unsubscribe();
      this.#wildcard = this.#wildcardFlush = null;
    });
  }

  #wildcardReady(): Promise<void> {
    if (this.#wildcardFlush) return this.#wildcardFlush;
    const flush = this.#o.nc.flush();
    this.#wildcardFlush = flush;
    flush.catch(() => {
      if (this.#wildcardFlush === flush) this.#wildcardFlush = null;
    });
    return flush;
  }

  /** Runs `then` once the server has processed everything sent so far. */
  #afterFlush(then: () => void): void {
    const { nc } = this.#o;
    nc.flush().then(then, () => {
      if (!nc.isClosed()) setTimeout(() => this.#afterFlush(then), FLUSH_RETRY_MS).unref();
    });
  }

  #subscribeSession(sessionId: string, subject: string): Subscription {
    return this.#o.nc.subscribe(subject, {
      callback: (err, msg) => (err ? this.#fail(this.#inputsOf(sessionId), err) : this.#dispatch(msg)),
    });
  }

  /** The wildcard ended (nats.js closed it): every session on it fails, as one on its own subscription would. */
  #wildcardFailed(err: Error): void {
    ++this.#epoch;
    this.#onWildcard = false;
    this.#wildcard = this.#wildcardFlush = null;
    this.#fail([...this.#inputs.values()].flat(), err);
  }

  #fail(inputs: LiveInput[], err: Error): void {
    for (const input of inputs) input.fail(err);
  }

  #inputsOf(sessionId: string): LiveInput[] {
    const inputs = this.#inputs.get(sessionId);
    return inputs === undefined ? [] : Array.isArray(inputs) ? [...inputs] : [inputs];
  }

  #dispatch(msg: Msg): void {
    const { subject } = msg;
    const sessionId = subject.slice(subject.lastIndexOf('.') + 1);
    // On the wildcard most messages may be of sessions this instance does not watch: not even decoded.
    const inputs = this.#inputs.get(sessionId);
    if (inputs === undefined) return;
    const event = this.#o.decode(sessionId, msg);
    if (event === undefined) return;
    if (!Array.isArray(inputs)) return inputs.push(event);
    for (const input of [...inputs]) input.push(event);
  }
}
