/**
 * The summary of the older history: one model call (issue 26). The entries are rendered as a
 * quoted plain-text transcript (every line starts with `> `, so nothing in it reads as an
 * instruction to a simulator or as a role marker); images become `[image]` and large tool
 * results are shortened first, then the whole text is cut to what the summariser may read.
 */
import type { LlmUsage, ResolvedModel } from '../../../src/llm/index.js';
import { ZERO_USAGE, type MessagePart } from '../../../src/turns/index.js';
import type { TranscriptEntry } from '../log/transcript.js';

export const COMPACTION_SYSTEM_PROMPT = [
  'You compact the history of a conversation between a user and an AI agent so the agent can continue it without the full history.',
  'Write a concise summary of the conversation below: what the user wants and asked for, decisions made, facts learned',
  '(names, numbers, identifiers, file paths), tool results that still matter, and what is still open.',
  'Keep the language of the conversation. Reply with the summary only.',
].join(' ');

export interface RenderLimits {
  /** A tool result longer than this is shortened to its head and tail. */
  maxResultChars: number;
  /** The rendered history is cut to this many characters (its middle goes). */
  maxChars: number;
}

function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.ceil(max * 0.7);
  const tail = max - head;
  return `${text.slice(0, head)} […${text.length - max} characters omitted…] ${tail > 0 ? text.slice(-tail) : ''}`;
}

const quote = (text: string) =>
  text
    .split(/\r?\n/)
    .map((l) => `> ${l}`)
    .join('\n');

function userText(parts: readonly MessagePart[]): string {
  return parts
    .map((p) => (p.type === 'text' ? String(p['text'] ?? '') : p.type.startsWith('image') ? '[image]' : `[${p.type}]`))
    .join('\n');
}

/** The entries (and the summary they follow) as the text the summariser reads. Pure. */
export function renderForSummary(previous: string | null, entries: readonly TranscriptEntry[], limits: RenderLimits): string {
  const blocks: string[] = [];
  if (previous) blocks.push(`Summary of what came before:\n${quote(previous)}`);
  for (const e of entries) {
    if (e.role === 'user') {
      blocks.push(`User:\n${quote(userText(e.content))}`);
      continue;
    }
    const lines: string[] = [];
    if (e.message.content) lines.push(e.message.content);
    for (const c of e.message.tool_calls ?? []) {
      lines.push(`[called ${c.name} ${shorten(JSON.stringify(c.arguments), 500)}]`);
      const r = e.results.get(c.id);
      if (r) lines.push(`[${r.is_error ? 'error' : 'result'} of ${c.name}: ${shorten(r.content, limits.maxResultChars)}]`);
    }
    blocks.push(`Agent:\n${quote(lines.join('\n'))}`);
  }
  return shorten(blocks.join('\n\n'), limits.maxChars);
}

export interface SummaryResult {
  summary: string;
  usage: LlmUsage;
}

/** Streams the summary from `model`; rejects with the provider's LlmError or the abort reason. */
export async function summarise(
  model: ResolvedModel,
  p: { rendered: string; instructions?: string; maxTokens: number; signal: AbortSignal },
): Promise<SummaryResult> {
  const system = p.instructions ? `${COMPACTION_SYSTEM_PROMPT}\n\nAlso: ${p.instructions}` : COMPACTION_SYSTEM_PROMPT;
  let text = '';
  let usage: LlmUsage = ZERO_USAGE;
  const stream = model.provider.stream({
    model: model.model,
    system,
    messages: [{ role: 'user', content: [{ type: 'text', text: p.rendered }] }],
    tools: [],
    controls: { max_tokens: Math.min(p.maxTokens, model.max_output_tokens ?? p.maxTokens) },
    signal: p.signal,
  });
  for await (const ev of stream) {
    if (ev.type === 'text_delta') text += ev.text;
    else if (ev.type === 'usage')
      usage = { input_tokens: ev.input_tokens, output_tokens: ev.output_tokens, cache_read_tokens: ev.cache_read_tokens };
  }
  // A model that ignores max_tokens (the simulator echoes) is cut at the same bound.
  return { summary: shorten(text.trim(), p.maxTokens * 4) || '(empty summary)', usage };
}
