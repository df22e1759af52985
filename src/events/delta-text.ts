/**
 * The `accumulated` field of streamed deltas (spec 6.2: `output.message.delta` and
 * `reason.thinking.delta` carry `turn_id, delta, accumulated`). Stored, a delta holds only its
 * `delta`: storing the text so far in every batch made a reply cost the square of its length
 * (a 100,000-token reply stored 1,451 events and 244.6 MB; issue 30 item 2). Readers derive
 * `accumulated` from the deltas of the same message, which start after the message's
 * `output.message.started` (or `reason.thinking.started`) of the turn. Pure: no I/O here.
 */
import type { SessionEvent } from '../../schemas/events.js';

/** The event that starts each delta type's text. */
const DELTA_OF = {
  'output.message.started': 'output.message.delta',
  'reason.thinking.started': 'reason.thinking.delta',
} as const;

/** Which text an event belongs to (`<delta type>|<turn id>`), and how it acts on that text. */
export type DeltaRole = { kind: 'start'; key: string } | { kind: 'delta'; key: string; delta: string; stored?: string } | { kind: 'other' };

/** How `e` acts on a streamed text: starts it, adds to it (with `accumulated` when an earlier version stored it), or neither. */
export function deltaRole(e: SessionEvent): DeltaRole {
  switch (e.type) {
    case 'output.message.started':
    case 'reason.thinking.started':
      return { kind: 'start', key: `${DELTA_OF[e.type]}|${e.data.turn_id}` };
    case 'output.message.delta':
    case 'reason.thinking.delta': {
      const { delta, accumulated: stored } = e.data;
      const key = `${e.type}|${e.data.turn_id}`;
      return stored === undefined ? { kind: 'delta', key, delta } : { kind: 'delta', key, delta, stored };
    }
    default:
      return { kind: 'other' };
  }
}

/** True for a delta stored without its `accumulated` (it must be derived before it is served). */
export function needsText(e: SessionEvent): boolean {
  const role = deltaRole(e);
  return role.kind === 'delta' && role.stored === undefined;
}

/**
 * Texts of the messages being streamed, as events are seen in order. `apply` answers the event
 * as served (a delta with its `accumulated`); `prefix` is asked for the text before a delta
 * whose message started before the events seen (it reads the log back).
 */
export class DeltaTexts {
  readonly #texts = new Map<string, string>();

  /** The text so far of `key`, when this instance has seen where it starts. */
  get(key: string): string | undefined {
    return this.#texts.get(key);
  }

  set(key: string, text: string): void {
    this.#texts.set(key, text);
  }

  /** The event as served; `before` is the text before a delta of an unseen message (from `prefix`). */
  apply(e: SessionEvent, before?: string): SessionEvent {
    const role = deltaRole(e);
    if (role.kind === 'other') return e;
    if (role.kind === 'start') {
      this.#texts.set(role.key, '');
      return e;
    }
    // Ropes: `+` shares the earlier text, so a page of deltas holds the reply about once, not once per delta.
    const text = role.stored ?? (this.#texts.get(role.key) ?? before ?? '') + role.delta;
    this.#texts.set(role.key, text);
    if (role.stored !== undefined || (e.type !== 'output.message.delta' && e.type !== 'reason.thinking.delta')) return e;
    return { ...e, data: { ...e.data, accumulated: text } };
  }
}
