/**
 * The conversation as the LLM sees it, folded from the whole session log (issue 6: "message
 * history for the LLM is rebuilt from the event log"), plus the session's cumulative usage.
 * Pure. Tool results are attached to the assistant message that asked for them, so the
 * history stays valid for every vendor even when other events (a cancel's user message)
 * were logged between a call and its result; a call that never got a result gets a
 * synthetic error result.
 *
 * Compaction (issue 26, decision 0100): a `session.compacted` event drops the entries up to its
 * boundary and keeps its summary; the LLM then sees the summary, then the entries after the
 * boundary verbatim. Everything here is data (hsnap serialises the fold).
 */
import type { EventData, SessionEvent, TypedEvent } from '../../../schemas/events.js';
import {
  deriveMessages,
  repairNoteText,
  type LlmAssistantMessage,
  type LlmMessage,
  type LlmToolCall,
  type LlmToolMessage,
  type LlmUserPart,
} from '../../../src/llm/index.js';
import { addUsage, ZERO_USAGE, type MessagePart, type Usage } from '../../../src/turns/index.js';

/** Shown to the LLM for a call that has no stored result. */
export const MISSING_RESULT_TEXT = 'No result: the tool call did not complete.';

interface UserEntry {
  role: 'user';
  /** The event that opened the entry (a compaction boundary names it). */
  event_id: string;
  /** Parts as stored; `image_file` parts are resolved to bytes when the request is built. */
  content: MessagePart[];
}

interface AssistantEntry {
  role: 'assistant';
  event_id: string;
  message: LlmAssistantMessage;
  results: Map<string, LlmToolMessage>;
}

export type TranscriptEntry = UserEntry | AssistantEntry;
type Entry = TranscriptEntry;

export interface Transcript {
  /** The sequence of the last folded event (0 = nothing folded). */
  sequence: number;
  /** Plain data and Maps only: a stored snapshot (snapshot-codec.ts) writes and reads them as they are. */
  entries: readonly Entry[];
  usage: Usage;
  /** The latest compaction's summary of the entries before `entries` (null: never compacted). */
  summary: string | null;
}

export function emptyTranscript(): Transcript {
  return { sequence: 0, entries: [], usage: ZERO_USAGE, summary: null };
}

/**
 * The index of the assistant entry that made call `callId`, or -1. Searched from the end: a
 * result follows its call within the same step, so this looks at one or two entries. (A map of
 * every call id was copied on every fold, a cost that grew with the session: issue 26.)
 */
function ownerOf(entries: readonly Entry[], callId: string): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.role === 'assistant' && e.message.tool_calls?.some((c) => c.id === callId)) return i;
  }
  return -1;
}

/** Shown to the LLM before the summary of a compacted history. */
export const SUMMARY_PREFIX = 'Summary of the earlier conversation (older messages were compacted):\n';

function resultText(data: EventData<'tool.completed'>): { content: string; is_error: boolean } {
  if (!data.success) return { content: data.error || 'Tool failed', is_error: true };
  const parts: MessagePart[] = data.result ?? [];
  const content = parts.map((p) => (p.type === 'text' ? String(p['text'] ?? '') : JSON.stringify(p))).join('\n');
  return { content, is_error: false };
}

function assistantOf(e: TypedEvent<'output.message.completed'>): LlmAssistantMessage {
  const { message } = e.data;
  const parts = message.content ?? [];
  const text = parts
    .filter((p) => p.type === 'text')
    .map((p) => String(p['text'] ?? ''))
    .join('');
  const calls: LlmToolCall[] = parts
    .filter((p) => p.type === 'tool_call')
    .map((p) => ({ id: String(p['id']), name: String(p['name']), arguments: (p['arguments'] ?? {}) as Record<string, unknown> }));
  const out: LlmAssistantMessage = { role: 'assistant', content: text };
  if (calls.length) out.tool_calls = calls;
  if (message.thinking) out.thinking = message.thinking;
  const state = e.metadata?.['provider_state'];
  if (typeof state === 'string') out.provider_state = state;
  return out;
}

/**
 * Folds events in order (appending to `t`, which is not modified). Events at or below
 * `t.sequence` are skipped, so replaying an overlap is harmless.
 */
export function extendTranscript(t: Transcript, events: readonly SessionEvent[]): Transcript {
  let entries: Entry[] | null = null;
  let { usage, sequence } = t;
  let summary = t.summary ?? null;
  // What the new entries share with t.entries: all but those replaced, unless a compaction cut them.
  let shared = t.entries.length;
  let cutAt = false;
  const mutable = () => (entries ??= t.entries.slice());
  // concat sizes the copy for what it adds: a slice then a push copied the history twice (issue 26).
  const append = (...added: Entry[]) => {
    if (entries) entries.push(...added);
    else entries = t.entries.concat(added);
  };
  for (const e of events) {
    if (e.sequence <= sequence) continue;
    sequence = e.sequence;
    switch (e.type) {
      case 'input.message': {
        append({ role: 'user', event_id: e.id, content: e.data.message.content ?? [] });
        break;
      }
      case 'output.message.completed': {
        const reply: Entry = { role: 'assistant', event_id: e.id, message: assistantOf(e), results: new Map() };
        // A reply that missed the response format is answered with what was wrong (the repair step's ask).
        const invalid = e.data.structured_output_errors;
        if (invalid) append(reply, { role: 'user', event_id: e.id, content: [{ type: 'text', text: repairNoteText(invalid) }] });
        else append(reply);
        break;
      }
      case 'tool.completed': {
        // A sub-agent's child turn counts in the session's usage.
        if (e.data.usage) usage = addUsage(usage, e.data.usage);
        const m = mutable();
        const callId = e.data.tool_call_id;
        const index = ownerOf(m, callId);
        if (index < 0) break;
        const owner = m[index] as AssistantEntry;
        const results = new Map(owner.results);
        results.set(callId, { role: 'tool', tool_call_id: callId, name: e.data.tool_name ?? '', ...resultText(e.data) });
        m[index] = { ...owner, results };
        shared = Math.min(shared, index);
        break;
      }
      case 'llm.generation':
        usage = addUsage(usage, e.data.usage);
        break;
      case 'session.compacted': {
        usage = addUsage(usage, e.data.usage);
        const m = mutable();
        // The last entry the boundary event opened (a repair note shares its reply's event).
        const cut = m.findLastIndex((x) => x.event_id === e.data.up_to_event_id);
        if (cut < 0) break; // a boundary this fold does not hold (already compacted past it)
        entries = m.slice(cut + 1);
        cutAt = true;
        summary = e.data.summary;
        break;
      }
      default:
        break;
    }
  }
  if (entries && !cutAt) deriveEntries(entries, t.entries, shared);
  return { sequence, entries: entries ?? t.entries, usage, summary };
}

/** Resolves an `image_file` part to inline bytes; null when the image is gone. */
export type ImagePartResolver = (part: MessagePart) => Promise<LlmUserPart | null>;

/**
 * An entry's messages when it has no image to resolve, kept while the entry lives (entries are
 * replaced, not changed, when a result arrives). Every step of a long session sends the same
 * history, and the same message objects let the request's measure and the vendor's mapping keep
 * theirs too (issue 26).
 */
const keptMessages = new WeakMap<Entry, readonly LlmMessage[] | null>();

function assistantMessages(entry: AssistantEntry): LlmMessage[] {
  const out: LlmMessage[] = [entry.message];
  for (const call of entry.message.tool_calls ?? []) {
    out.push(
      entry.results.get(call.id) ?? { role: 'tool', tool_call_id: call.id, name: call.name, content: MISSING_RESULT_TEXT, is_error: true },
    );
  }
  return out;
}

/** The text parts of a user entry; null when it has images. */
function textParts(entry: UserEntry): LlmUserPart[] | null {
  if (entry.content.some((p) => p.type === 'image_file')) return null;
  return entry.content.filter((p) => p.type === 'text').map((p) => ({ type: 'text', text: String(p['text'] ?? '') }));
}

function textOnlyMessages(entry: UserEntry): LlmMessage[] | null {
  const content = textParts(entry);
  if (!content) return null;
  return content.length ? [{ role: 'user', content }] : [];
}

/** null: a user entry with images, resolved per attempt. */
function entryMessages(entry: Entry): readonly LlmMessage[] | null {
  let messages = keptMessages.get(entry);
  if (messages === undefined) {
    messages = entry.role === 'user' ? textOnlyMessages(entry) : assistantMessages(entry);
    keptMessages.set(entry, messages);
  }
  return messages;
}

/**
 * The messages of an entries array with no image to resolve, kept while it lives; `ends[i]`:
 * messages up to entry i. `anchor`: the newest list read by a step that begins with this one's
 * first `shared` messages (itself until a step's list is built from it), from which the next
 * list is derived (deriveMessages) so that the request's measure and the vendor's mapping of it
 * reuse what they kept for that list.
 */
interface Built {
  summary: string | null;
  messages: LlmMessage[];
  ends: number[];
  anchor: { list: readonly LlmMessage[]; shared: number };
}
const built = new WeakMap<readonly Entry[], Built>();
/**
 * Where an unbuilt entries array starts from: the built (or never derived) array it was extended
 * from, through any unbuilt ones between, with how many leading entries they share; and the
 * array it was extended from itself (`parent`). A step builds its view from `base` directly: linked
 * through each fold of a turn (one per event), building the view built every array between and
 * copied the history once for each (issue 26: most of what an old session's step allocated).
 */
interface Lineage {
  base: readonly Entry[];
  shared: number;
  parent?: { entries: readonly Entry[]; shared: number };
}
const entriesLineage = new WeakMap<readonly Entry[], Lineage>();

/** Records that `entries` begins with `base`'s first `shared` entries (see builtOf). */
function deriveEntries(entries: readonly Entry[], base: readonly Entry[], shared: number): void {
  const via = built.has(base) ? undefined : entriesLineage.get(base);
  entriesLineage.set(
    entries,
    via ? { base: via.base, shared: Math.min(via.shared, shared), parent: { entries: base, shared } } : { base, shared },
  );
}

/**
 * Once `entries` is built, the unbuilt array it was extended from starts from it instead: the
 * two share that many entries. The turn log extends its stored fold and its view side by side,
 * and a step reads only the view: the stored fold's next arrays (and the next turn's view, which
 * starts from the stored fold) then start from the last step's view, not from an older one.
 */
function relinkParent(entries: readonly Entry[], from: Lineage | undefined): void {
  const parent = from?.parent;
  if (parent && !built.has(parent.entries)) entriesLineage.set(parent.entries, { base: entries, shared: parent.shared });
}

/** The first user entry's messages with the summary leading them; null when it has images. */
const ledKept = new WeakMap<Entry, { summary: string; messages: readonly LlmMessage[] | null }>();
function ledMessages(entry: UserEntry, summary: string): readonly LlmMessage[] | null {
  let kept = ledKept.get(entry);
  if (kept?.summary !== summary) {
    const own = textParts(entry);
    kept = { summary, messages: own && [{ role: 'user', content: [{ type: 'text', text: SUMMARY_PREFIX + summary }, ...own] }] };
    ledKept.set(entry, kept);
  }
  return kept.messages;
}

/** The first `n` items of `list` then `added`, in one array sized for both (`added` itself when `n` is 0). */
function prefixThen<T>(list: readonly T[] | undefined, n: number, added: T[]): T[] {
  if (!list || n === 0) return added;
  return (n === list.length ? list : list.slice(0, n)).concat(added);
}

/**
 * The messages of `entries` built from those of the array it was extended from (built first if
 * need be: the turn log extends its stored fold, and its view from that): only the entries after
 * the shared ones are visited, so a step of a long session costs what is new since the last
 * step (issue 26). Null when an entry has images (resolved per attempt).
 */
function builtOf(entries: readonly Entry[], summary: string | null): Built | null {
  const kept = built.get(entries);
  if (kept && kept.summary === summary) return kept;
  const from = entriesLineage.get(entries);
  const base = from ? builtOf(from.base, summary) : null;
  const reuse = base ? from!.shared : 0;
  const shared = reuse ? base!.ends[reuse - 1]! : 0;
  const added: LlmMessage[] = [];
  const addedEnds: number[] = [];
  if (!reuse && summary && entries[0]?.role !== 'user')
    added.push({ role: 'user', content: [{ type: 'text', text: SUMMARY_PREFIX + summary }] });
  for (let i = reuse; i < entries.length; i++) {
    const entry = entries[i]!;
    const own = i === 0 && summary && entry.role === 'user' ? ledMessages(entry, summary) : entryMessages(entry);
    if (!own) return null;
    for (const m of own) added.push(m);
    addedEnds.push(shared + added.length);
  }
  const messages = prefixThen(base?.messages, shared, added);
  const ends = prefixThen(base?.ends, reuse, addedEnds);
  const anchor = base
    ? { list: base.anchor.list, shared: Math.min(base.anchor.shared, shared) }
    : { list: messages, shared: messages.length };
  const out: Built = { summary, messages, ends, anchor };
  built.set(entries, out);
  entriesLineage.delete(entries);
  relinkParent(entries, from);
  if (base) deriveMessages(messages, anchor.list, anchor.shared);
  return out;
}

/**
 * The LLM messages of the transcript, every tool call followed by its result. The list is shared
 * by every caller of the same transcript: never mutated.
 */
export async function toLlmMessages(t: Transcript, resolveImage: ImagePartResolver): Promise<LlmMessage[]> {
  const base = entriesLineage.get(t.entries);
  const own = builtOf(t.entries, t.summary);
  if (!own) return resolvedMessages(t, resolveImage);
  // The list a step reads, whose measure and mapping are kept: what is built from this transcript
  // next, or from its base (the turn log's next view of its stored fold), derives from it.
  own.anchor = { list: own.messages, shared: own.messages.length };
  const from = base && built.get(base.base);
  const shared = from?.ends[base!.shared - 1] ?? 0;
  if (from && shared > 0) from.anchor = { list: own.messages, shared };
  return own.messages;
}

/** The transcript's messages with images resolved (walks every entry). */
async function resolvedMessages(t: Transcript, resolveImage: ImagePartResolver): Promise<LlmMessage[]> {
  const out: LlmMessage[] = [];
  // The summary leads the first user message (vendors want user and assistant turns to alternate).
  let lead: LlmUserPart[] = t.summary ? [{ type: 'text', text: SUMMARY_PREFIX + t.summary }] : [];
  if (lead.length && t.entries[0]?.role !== 'user') {
    out.push({ role: 'user', content: lead });
    lead = [];
  }
  for (const entry of t.entries) {
    const kept = entry.role === 'user' && lead.length ? null : entryMessages(entry);
    if (kept) {
      for (const m of kept) out.push(m);
      continue;
    }
    if (entry.role === 'user') {
      const content: LlmUserPart[] = lead;
      lead = [];
      for (const part of entry.content) {
        if (part.type === 'text') content.push({ type: 'text', text: String(part['text'] ?? '') });
        else if (part.type === 'image_file') content.push((await resolveImage(part)) ?? { type: 'text', text: '[image unavailable]' });
      }
      if (content.length) out.push({ role: 'user', content });
    }
  }
  return out;
}
