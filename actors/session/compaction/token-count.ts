/**
 * The size of a reason step's request in tokens, known before it is sent (issue 26). OpenAI's
 * models get a real count (gpt-tokenizer, o200k_base); other vendors an estimate (4 characters a
 * token) that the turn calibrates with the input tokens the vendor reported for the previous
 * step. Counting is bounded: at most `exactChars` characters are tokenised, in slices of
 * `SLICE_CHARS` with a yield to the event loop between slices (BPE on one long run without
 * spaces is super-linear: 66 KB of base64 took 0.7 s whole, 80 ms in 2 KB slices); the rest is
 * counted at the ratio measured on what was tokenised.
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

/** The texts of a request, and its images, as the vendor would count them. */
export function requestTexts(req: RequestShape): { texts: string[]; images: number; messages: number } {
  const texts: string[] = [req.system];
  let images = 0;
  for (const t of req.tools) texts.push(t.name, t.description, JSON.stringify(t.parameters));
  for (const m of req.messages) {
    if (m.role === 'user') {
      for (const p of m.content) {
        if (p.type === 'text') texts.push(p.text);
        else images++;
      }
    } else if (m.role === 'assistant') {
      texts.push(m.content);
      for (const c of m.tool_calls ?? []) texts.push(c.name, JSON.stringify(c.arguments));
    } else texts.push(m.content);
  }
  return { texts, images, messages: req.messages.length };
}

/** Tokens a vendor adds beyond the request's texts (Anthropic's tool-use system prompt is a few hundred). */
const VENDOR_FRAMING_TOKENS = 1_000;

/**
 * The plain estimate (characters / 4, images and framing added) and a bound no vendor's count
 * exceeds: byte-level BPE makes at most one token per UTF-8 byte. Pure, linear, no tokenizer.
 */
export function requestSize(req: RequestShape): { estimate: number; bound: number } {
  const { texts, images, messages } = requestTexts(req);
  let chars = 0;
  let bytes = 0;
  for (const t of texts) {
    chars += t.length;
    bytes += Buffer.byteLength(t);
  }
  const framing = images * IMAGE_TOKENS + messages * MESSAGE_OVERHEAD;
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
 * The exact count for OpenAI's models, bounded as described above; null when there is no
 * tokenizer for this vendor (or it is still loading): the caller then estimates.
 */
export async function countTokens(vendor: LlmProviderType, req: RequestShape, exactChars: number): Promise<number | null> {
  if (vendor !== 'openai' && vendor !== 'openai_completions') return null;
  const count = openAiTokenizer();
  if (!count) return null;
  const { texts, images, messages } = requestTexts(req);
  let budget = exactChars;
  let countedChars = 0;
  let counted = 0;
  let rest = 0;
  for (const text of texts) {
    let i = 0;
    for (; i < text.length && budget > 0; i += SLICE_CHARS) {
      const slice = text.slice(i, i + Math.min(SLICE_CHARS, budget));
      counted += count(slice);
      countedChars += slice.length;
      budget -= slice.length;
      await yieldToLoop();
    }
    rest += Math.max(0, text.length - i);
  }
  const ratio = countedChars > 0 ? counted / countedChars : 1 / CHARS_PER_TOKEN;
  return counted + Math.ceil(rest * ratio) + images * IMAGE_TOKENS + messages * MESSAGE_OVERHEAD;
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
