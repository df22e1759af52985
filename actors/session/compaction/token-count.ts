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
 * 2 KB slices); the rest is counted at the ratio measured on what was tokenised, and not kept.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { LlmMessage, LlmProviderType, LlmToolDefinition } from '../../../src/llm/index.js';

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

/** What one message (or the request's fixed part) weighs; `tokens` once counted exactly. */
interface Measured {
  texts: readonly string[];
  chars: number;
  bytes: number;
  images: number;
  tokens?: number;
}

const perMessage = new WeakMap<LlmMessage, Measured>();
/** The fixed part (system prompt and tools), kept per tool list: a turn's steps share both. */
const perToolList = new WeakMap<readonly LlmToolDefinition[], { system: string; size: Measured }>();

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
  const size = measured([system, ...tools.flatMap((t) => [t.name, t.description, JSON.stringify(t.parameters)])], 0);
  perToolList.set(tools, { system, size });
  return size;
}

/** The parts of a request, each measured once while it lives. */
function partsOf(req: RequestShape): Measured[] {
  return [fixedPart(req), ...req.messages.map(ofMessage)];
}

/**
 * The plain estimate (characters / 4, images and framing added) and a bound no vendor's count
 * exceeds: byte-level BPE makes at most one token per UTF-8 byte. Pure, linear, no tokenizer.
 */
export function requestSize(req: RequestShape): { estimate: number; bound: number } {
  let chars = 0;
  let bytes = 0;
  let images = 0;
  for (const p of partsOf(req)) {
    chars += p.chars;
    bytes += p.bytes;
    images += p.images;
  }
  const framing = images * IMAGE_TOKENS + req.messages.length * MESSAGE_OVERHEAD;
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

/** Tokens of `texts`, at most `budget` characters of them tokenised; the rest is returned uncounted. */
async function countTexts(
  count: CountFn,
  texts: readonly string[],
  budget: number,
): Promise<{ tokens: number; chars: number; rest: number }> {
  let tokens = 0;
  let chars = 0;
  let rest = 0;
  for (const text of texts) {
    let i = 0;
    for (; i < text.length && chars < budget; i += SLICE_CHARS) {
      const slice = text.slice(i, i + Math.min(SLICE_CHARS, budget - chars));
      tokens += count(slice);
      chars += slice.length;
      await yieldToLoop();
    }
    rest += Math.max(0, text.length - i);
  }
  return { tokens, chars, rest };
}

/**
 * The exact count for OpenAI's models, bounded as described above; null when there is no
 * tokenizer for this vendor (or it is still loading): the caller then estimates.
 */
export async function countTokens(vendor: LlmProviderType, req: RequestShape, exactChars: number): Promise<number | null> {
  if (vendor !== 'openai' && vendor !== 'openai_completions') return null;
  const count = openAiTokenizer();
  if (!count) return null;
  let budget = exactChars;
  let exact = 0;
  let exactCharsSeen = 0;
  let rest = 0;
  let images = 0;
  for (const part of partsOf(req)) {
    images += part.images;
    if (part.tokens === undefined) {
      const counted = await countTexts(count, part.texts, budget);
      budget -= counted.chars;
      rest += counted.rest;
      exact += counted.tokens;
      exactCharsSeen += counted.chars;
      // Kept only when whole: a part cut by the budget is counted again, exactly, by a later step.
      if (counted.rest === 0) part.tokens = counted.tokens;
      continue;
    }
    exact += part.tokens;
    exactCharsSeen += part.chars;
  }
  const ratio = exactCharsSeen > 0 ? exact / exactCharsSeen : 1 / CHARS_PER_TOKEN;
  return exact + Math.ceil(rest * ratio) + images * IMAGE_TOKENS + req.messages.length * MESSAGE_OVERHEAD;
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
