/**
 * The event log as readers serve it: every delta with its `accumulated` (spec 6.2), derived from
 * the deltas stored before it (src/events/delta-text.ts). The turn engine reads the bare log;
 * the listing and the SSE hub read through this.
 */
import type { SessionEvent } from '../../schemas/events.js';
import { LRUCache } from 'lru-cache';
import { iterateFeed, type EventReader, type EventSink, type FeedHandle } from '../bus/index.js';
import { deltaRole, DeltaTexts, needsText } from './delta-text.js';

export interface AccumulatingLogOptions {
  /**
   * Text of recently served messages kept per instance, in UTF-16 code units (default 16 Mi):
   * a reader that pages on through a message (listing pages, SSE replay pages) reads only the
   * events after the last one served instead of the message again from its start.
   */
  maxCachedChars: number;
}

const DEFAULT_MAX_CACHED_CHARS = 16 * 1024 * 1024;
const PAGE = 1000;

interface KnownText {
  sequence: number;
  text: string;
}

/** Wraps `log` so its reads and subscriptions serve deltas with `accumulated`: the log as its readers see it (they cannot write). */
export function withAccumulatedDeltas(
  log: EventReader<SessionEvent>,
  opts: Partial<AccumulatingLogOptions> = {},
): EventReader<SessionEvent> {
  const { maxCachedChars = DEFAULT_MAX_CACHED_CHARS } = opts;
  const known = new LRUCache<string, KnownText>({ maxSize: maxCachedChars, sizeCalculation: (v) => v.text.length + 1 });

  /** Text of `key` before sequence `q`, from the last text served before it (read forward), else from the message's start (read back). */
  async function prefix(sessionId: string, q: number, key: string): Promise<string> {
    const hit = known.get(`${sessionId}|${key}`);
    if (hit && hit.sequence < q) return forwardFrom(sessionId, hit, q, key);
    return backTo(sessionId, q, key);
  }

  async function forwardFrom(sessionId: string, from: KnownText, q: number, key: string): Promise<string> {
    const texts = new DeltaTexts();
    texts.set(key, from.text);
    for (let after = from.sequence; after < q - 1; ) {
      const page = await log.read(sessionId, { afterSequence: after, limit: Math.min(PAGE, q - 1 - after) });
      for (const e of page) if (e.sequence < q) texts.apply(e);
      if (page.length === 0) break;
      after = page.at(-1)!.sequence;
    }
    return texts.get(key) ?? '';
  }

  /** Walks down from q - 1 to the event that starts `key`'s text (or a delta stored with its text), collecting deltas. */
  async function backTo(sessionId: string, q: number, key: string): Promise<string> {
    const parts: string[] = [];
    for (let top = q - 1; top > 0; ) {
      const from = Math.max(0, top - PAGE);
      const page = await log.read(sessionId, { afterSequence: from, limit: top - from });
      for (let i = page.length - 1; i >= 0; i--) {
        const e = page[i]!;
        if (e.sequence > top) continue;
        const role = deltaRole(e);
        if (role.kind === 'other' || role.key !== key) continue;
        if (role.kind === 'start') return parts.reverse().join('');
        parts.push(role.stored ?? role.delta);
        if (role.stored !== undefined) return parts.reverse().join('');
      }
      if (page.length === 0) break;
      top = from;
    }
    return parts.reverse().join('');
  }

  /**
   * `e` as served, given the texts of the events before it in the same read or feed: a promise
   * only when it must read the text before it from the log (a delta of a message begun before
   * the read), so a live feed goes on synchronously otherwise.
   */
  function serve(sessionId: string, texts: DeltaTexts, e: SessionEvent): SessionEvent | Promise<SessionEvent> {
    const role = deltaRole(e);
    if (role.kind === 'other') return e;
    if (needsText(e) && texts.get(role.key) === undefined) {
      return prefix(sessionId, e.sequence, role.key).then((before) => remember(sessionId, texts, e, role.key, before));
    }
    return remember(sessionId, texts, e, role.key, undefined);
  }

  function remember(sessionId: string, texts: DeltaTexts, e: SessionEvent, key: string, before: string | undefined): SessionEvent {
    const served = texts.apply(e, before);
    known.set(`${sessionId}|${key}`, { sequence: e.sequence, text: texts.get(key) ?? '' });
    return served;
  }

  async function servePage(sessionId: string, page: SessionEvent[]): Promise<SessionEvent[]> {
    const texts = new DeltaTexts();
    const out: SessionEvent[] = [];
    for (const e of page) out.push(await serve(sessionId, texts, e));
    return out;
  }

  function follow(sessionId: string, sink: EventSink<SessionEvent>, subOpts?: { afterSequence?: number }): FeedHandle {
    return log.follow(sessionId, new ServingSink(sessionId, sink, serve), subOpts);
  }

  return {
    read: async (sessionId, readOpts) => servePage(sessionId, await log.read(sessionId, readOpts)),
    findById: async (sessionId, eventId) => {
      const e = await log.findById(sessionId, eventId);
      return e && needsText(e) ? serve(sessionId, new DeltaTexts(), e) : e;
    },
    lastSequence: (sessionId) => log.lastSequence(sessionId),
    follow,
    subscribe: (sessionId, subOpts) => iterateFeed((sink) => follow(sessionId, sink, subOpts)),
  };
}

type Serve = (sessionId: string, texts: DeltaTexts, e: SessionEvent) => SessionEvent | Promise<SessionEvent>;

/**
 * A feed's events as served, passed on to `inner`: one object per followed session, its texts
 * made at the first delta. When a delta needs its prefix read, the returned promise holds the
 * feed, so the events after it wait and stay in order.
 */
class ServingSink implements EventSink<SessionEvent> {
  readonly #sessionId: string;
  readonly #inner: EventSink<SessionEvent>;
  readonly #serve: Serve;
  #texts: DeltaTexts | undefined;

  constructor(sessionId: string, inner: EventSink<SessionEvent>, serve: Serve) {
    this.#sessionId = sessionId;
    this.#inner = inner;
    this.#serve = serve;
  }

  event(e: SessionEvent): void | Promise<void> {
    if (deltaRole(e).kind === 'other') return this.#inner.event(e);
    const served = this.#serve(this.#sessionId, (this.#texts ??= new DeltaTexts()), e);
    return served instanceof Promise ? served.then((s) => this.#inner.event(s)) : this.#inner.event(served);
  }

  end(err: Error | null): void {
    this.#inner.end(err);
  }
}
