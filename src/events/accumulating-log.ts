/**
 * The event log as readers serve it: every delta with its `accumulated` (spec 6.2), derived from
 * the deltas stored before it (src/events/delta-text.ts). The turn engine reads the bare log;
 * the listing and the SSE hub read through this.
 */
import type { SessionEvent } from '../../schemas/events.js';
import { LRUCache } from 'lru-cache';
import type { EventReader, EventSubscription } from '../bus/index.js';
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

  /** `e` as served, given the texts of the events before it in the same read. */
  async function serve(sessionId: string, texts: DeltaTexts, e: SessionEvent): Promise<SessionEvent> {
    const role = deltaRole(e);
    if (role.kind === 'other') return e;
    const before = needsText(e) && texts.get(role.key) === undefined ? await prefix(sessionId, e.sequence, role.key) : undefined;
    const served = texts.apply(e, before);
    known.set(`${sessionId}|${role.key}`, { sequence: e.sequence, text: texts.get(role.key) ?? '' });
    return served;
  }

  async function servePage(sessionId: string, page: SessionEvent[]): Promise<SessionEvent[]> {
    const texts = new DeltaTexts();
    const out: SessionEvent[] = [];
    for (const e of page) out.push(await serve(sessionId, texts, e));
    return out;
  }

  function subscribe(sessionId: string, subOpts?: { afterSequence?: number }): EventSubscription<SessionEvent> {
    const inner = log.subscribe(sessionId, subOpts);
    const texts = new DeltaTexts();
    async function* served(): AsyncGenerator<SessionEvent> {
      for await (const e of inner) yield await serve(sessionId, texts, e);
    }
    const iterator = served();
    return { [Symbol.asyncIterator]: () => iterator, close: () => inner.close(), closed: () => inner.closed() };
  }

  return {
    read: async (sessionId, readOpts) => servePage(sessionId, await log.read(sessionId, readOpts)),
    findById: async (sessionId, eventId) => {
      const e = await log.findById(sessionId, eventId);
      return e && needsText(e) ? serve(sessionId, new DeltaTexts(), e) : e;
    },
    lastSequence: (sessionId) => log.lastSequence(sessionId),
    subscribe,
  };
}
