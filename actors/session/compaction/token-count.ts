/**
 * The size of a reason step's request in tokens, known before it is sent (issue 26). OpenAI's
 * models get a real count (gpt-tokenizer, o200k_base); other vendors an estimate (4 characters a
 * token) that the turn calibrates with the input tokens the vendor reported for the previous
 * step.
 *
 * Every step of a long session re-sends the same history, so what is measured is kept per
 * message object while it lives (a WeakMap; the transcript hands the same objects to every step
 * and turn of a worker): a step measures only what is new since the last one, and its cost does
 * not grow with the session. Counting is bounded: at most `exactChars` characters of new text are
 * tokenised per request, in slices of `SLICE_CHARS` with a yield to the event loop between slices
 * (BPE on one long run without spaces is super-linear: 66 KB of base64 took 0.7 s whole, 80 ms in
 * 2 KB slices); the rest is counted at the ratio measured on what was tokenised. A text longer
 * than the bound (a pasted document, a large tool result) keeps how far its whole slices were
 * counted, and the next request goes on from there: counted again from its start, it cost every
 * later step of a session near its limit a full bound of tokenising (~1.5 ms for 32 K characters).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import { perMessageList, type LlmMessage, type LlmProviderType, type LlmToolDefinition } from '../../../src/llm/index.js';

export interface RequestShape {
  system: string;
  messages: readonly LlmMessage[];
  tools: readonly LlmToolDefinition[];
}

/** Tokens an inline image is counted as (vendors charge by size: 85-1 600 for OpenAI, ~1 600 for Claude). */
export const IMAGE_TOKENS = 1_000;
/** Characters per token of the plain estimate (the vendors' published rule of thumb for English). */
export const CHARS_PER_TOKEN = 4;
/** Tokens of framing per message (role markers). */
const MESSAGE_OVERHEAD = 4;
const SLICE_CHARS = 2_048;
/** Tokens a vendor adds beyond the request's texts (Anthropic's tool-use system prompt is a few hundred). */
const VENDOR_FRAMING_TOKENS = 1_000;

/** How far a text cut by the bound was counted: `texts[text]` up to `offset`, `chars` in all, making `tokens`. */
interface Progress {
  text: number;
  offset: number;
  chars: number;
  tokens: number;
}
const START: Progress = { text: 0, offset: 0, chars: 0, tokens: 0 };

/** What one message (or the request's fixed part) weighs; `tokens` once counted exactly. */
interface Measured {
  texts: readonly string[];
  chars: number;
  bytes: number;
  images: number;
  tokens?: number;
  /** Set while `tokens` is not: where the last count stopped, at a slice boundary. */
  counted?: Progress;
}

const perMessage = new WeakMap<LlmMessage, Measured>();
/** The fixed part (system prompt and tools), kept per tool list: a turn's steps share both. */
const perToolList = new WeakMap<readonly LlmToolDefinition[], { system: string; size: Measured }>();
/**
 * And kept by its content, across turns and sessions: every turn's setup builds a new prompt and
 * tool list, equal to the last turn's, and a prompt of a few KB cost every turn its tokenising
 * again (32 K characters of a long one: ~1.5 ms a step). Bounded in characters held.
 */
const byContent = new LRUCache<string, Measured>({ maxSize: 4 * 1024 * 1024, sizeCalculation: (_, key) => key.length || 1 });

function measured(texts: string[], images: number): Measured {
  let chars = 0;
  let bytes = 0;
  for (const t of texts) {
    chars += t.length;
    bytes += Buffer.byteLength(t);
  }
  return { texts, chars, bytes, images };
}

/** The texts of a message, and its images, as the vendor would count them. */
function messageTexts(m: LlmMessage): Measured {
  const texts: string[] = [];
  let images = 0;
  if (m.role === 'user') {
    for (const p of m.content) {
      if (p.type === 'text') texts.push(p.text);
      else images++;
    }
  } else if (m.role === 'assistant') {
    texts.push(m.content);
    for (const c of m.tool_calls ?? []) texts.push(c.name, JSON.stringify(c.arguments));
  } else texts.push(m.content);
  return measured(texts, images);
}

function ofMessage(m: LlmMessage): Measured {
  let size = perMessage.get(m);
  if (!size) {
    size = messageTexts(m);
    perMessage.set(m, size);
  }
  return size;
}

function fixedPart({ system, tools }: RequestShape): Measured {
  const kept = perToolList.get(tools);
  if (kept?.system === system) return kept.size;
  const texts = [system, ...tools.flatMap((t) => [t.name, t.description, JSON.stringify(t.parameters)])];
  // Each text led by its length: no two different lists make the same key.
  const key = texts.map((t) => `${t.length}:${t}`).join('');
  let size = byContent.get(key);
  if (!size) {
    size = measured(texts, 0);
    byContent.set(key, size);
  }
  perToolList.set(tools, { system, size });
  return size;
}

/** The totals of a message list up to a position; `tokens` while every message up to it is counted whole. */
interface Running {
  chars: number;
  bytes: number;
  images: number;
  tokens?: number;
}

/**
 * Running totals kept with each message list: the transcript derives a step's list from the last
 * step's, so a step adds up only its new messages, not the whole history (issue 26).
 */
const runningTotals = perMessageList<Running>((m, before) => {
  const size = ofMessage(m);
  const running: Running = {
    chars: (before?.chars ?? 0) + size.chars,
    bytes: (before?.bytes ?? 0) + size.bytes,
    images: (before?.images ?? 0) + size.images,
  };
  if (size.tokens !== undefined && (!before || before.tokens !== undefined)) running.tokens = (before?.tokens ?? 0) + size.tokens;
  return running;
});

/**
 * The plain estimate (characters / 4, images and framing added) and a bound no vendor's count
 * exceeds: byte-level BPE makes at most one token per UTF-8 byte. Pure, no tokenizer; linear in
 * the messages the list does not share with one measured before.
 */
export function requestSize(req: RequestShape): { estimate: number; bound: number } {
  const fixed = fixedPart(req);
  const all = runningTotals(req.messages).at(-1);
  const chars = fixed.chars + (all?.chars ?? 0);
  const bytes = fixed.bytes + (all?.bytes ?? 0);
  const framing = (all?.images ?? 0) * IMAGE_TOKENS + req.messages.length * MESSAGE_OVERHEAD;
  return { estimate: Math.ceil(chars / CHARS_PER_TOKEN) + framing, bound: bytes + framing + VENDOR_FRAMING_TOKENS };
}

/** The plain estimate of requestSize. */
export function estimateTokens(req: RequestShape): number {
  return requestSize(req).estimate;
}

type CountFn = (text: string) => number;
let tokenizer: CountFn | null = null;
let loading: Promise<void> | null = null;

/** The OpenAI tokenizer once loaded; starts loading it (about 2 MB of tables) on first ask. */
function openAiTokenizer(): CountFn | null {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then(
    (m) => {
      tokenizer = m.countTokens;
    },
    () => undefined, // not installed or broken: the estimate stands in
  );
  return tokenizer;
}

/** Waits for the OpenAI tokenizer to load (tests; the turn never waits for it). */
export async function loadOpenAiTokenizer(): Promise<boolean> {
  openAiTokenizer();
  await loading;
  return tokenizer !== null;
}

/**
 * Counts `texts` from `from`, at most `budget` characters: `at`, where this count stopped, and
 * `kept`, the last slice boundary before it. Slices start at multiples of SLICE_CHARS in each
 * text, so a count resumed from `kept` slices as a whole count does and adds up to the same.
 */
async function countTexts(
  count: CountFn,
  texts: readonly string[],
  budget: number,
  from: Progress,
): Promise<{ at: Progress; kept: Progress }> {
  let { text: t, offset: i, chars, tokens } = from;
  let kept = from;
  const end = from.chars + budget;
  for (; t < texts.length; t++, i = 0) {
    const text = texts[t]!;
    while (i < text.length && chars < end) {
      const slice = text.slice(i, i + Math.min(SLICE_CHARS, end - chars));
      tokens += count(slice);
      chars += slice.length;
      i += slice.length;
      // A slice the budget cut short is this request's; the next count slices it whole.
      if (slice.length === SLICE_CHARS || i === text.length) kept = { text: t, offset: i, chars, tokens };
      await yieldToLoop();
    }
    if (i < text.length) break;
  }
  return { at: { text: t, offset: i, chars, tokens }, kept };
}

/** What a count has seen so far: exact tokens, the characters they came from, and characters left uncounted. */
interface Tally {
  budget: number;
  exact: number;
  seen: number;
  rest: number;
}

/** Counts a part (within the tally's budget) unless it is counted already; true when it is counted whole. */
async function countPart(count: CountFn, part: Measured, tally: Tally): Promise<boolean> {
  if (part.tokens === undefined) {
    const from = part.counted ?? START;
    const { at, kept } = await countTexts(count, part.texts, tally.budget, from);
    const rest = part.chars - at.chars;
    tally.budget -= at.chars - from.chars;
    tally.rest += rest;
    tally.exact += at.tokens;
    tally.seen += at.chars;
    if (rest === 0) {
      part.tokens = at.tokens;
      part.counted = undefined;
    } else part.counted = kept;
    return rest === 0;
  }
  tally.exact += part.tokens;
  tally.seen += part.chars;
  return true;
}

/**
 * The exact count for OpenAI's models, bounded as described above; null when there is no
 * tokenizer for this vendor (or it is still loading): the caller then estimates. The messages
 * counted whole up to a position are added up once (runningTotals): a step visits only the rest.
 */
export async function countTokens(vendor: LlmProviderType, req: RequestShape, exactChars: number): Promise<number | null> {
  if (vendor !== 'openai' && vendor !== 'openai_completions') return null;
  const count = openAiTokenizer();
  if (!count) return null;
  const tally: Tally = { budget: exactChars, exact: 0, seen: 0, rest: 0 };
  await countPart(count, fixedPart(req), tally);
  const totals = runningTotals(req.messages);
  let from = totals.length;
  while (from > 0 && totals.at(from - 1)!.tokens === undefined) from--;
  const counted = from > 0 ? totals.at(from - 1) : undefined;
  tally.exact += counted?.tokens ?? 0;
  tally.seen += counted?.chars ?? 0;
  for (let i = from; i < totals.length; i++) {
    const size = ofMessage(req.messages[i]!);
    const whole = await countPart(count, size, tally);
    const before = i === 0 ? 0 : totals.at(i - 1)!.tokens;
    if (whole && before !== undefined) totals.at(i)!.tokens = before + size.tokens!;
  }
  const ratio = tally.seen > 0 ? tally.exact / tally.seen : 1 / CHARS_PER_TOKEN;
  const images = totals.at(-1)?.images ?? 0;
  return tally.exact + Math.ceil(tally.rest * ratio) + images * IMAGE_TOKENS + req.messages.length * MESSAGE_OVERHEAD;
}

/**
 * The estimate corrected by what the vendor said last time: `reported` input tokens for a
 * request whose plain estimate was `estimated`. The factor is clamped (0.5-4) so one odd report
 * cannot make the turn compact at every step or never.
 */
export function calibrated(estimate: number, last: { estimated: number; reported: number } | null): number {
  if (!last || last.estimated <= 0 || last.reported <= 0) return estimate;
  const factor = Math.min(4, Math.max(0.5, last.reported / last.estimated));
  return Math.ceil(estimate * factor);
}
