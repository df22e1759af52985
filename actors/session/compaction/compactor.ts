/**
 * Keeps a turn's requests inside the model's context window (issue 26, decision 0100). Before
 * each reason step it measures the request (token-count.ts); over the threshold it summarises the
 * older history (summarise.ts) up to a boundary (boundary.ts) and stores `session.compacted`,
 * which the transcript fold turns into "summary, then the rest verbatim". A vendor's "context
 * length exceeded" compacts once more, keeping only the newest entry, and the step is retried.
 */
import type { NewSessionEvent } from '../../../schemas/events.js';
import type { LlmMessage, LlmToolDefinition, ResolvedModel } from '../../../src/llm/index.js';
import { turnEvents, type TurnRef } from '../../../src/turns/index.js';
import type { Transcript, TranscriptEntry } from '../log/transcript.js';
import { chooseBoundary, keepBudget } from './boundary.js';
import { renderForSummary, summarise } from './summarise.js';
import { CHARS_PER_TOKEN, calibrated, countTokens, estimateTokens, IMAGE_TOKENS, requestSize, type RequestShape } from './token-count.js';

export interface CompactionOptions {
  /** false: never compact before a step (a vendor's refusal still compacts once). */
  enabled: boolean;
  /** Compact when a request would hold more than this share of the window, in percent (default 80). */
  thresholdPercent: number;
  /** The newest entries kept verbatim fill at most this share of the window, in percent (default 30). */
  keepRecentPercent: number;
  /** Most tokens of a summary (default 2 000). */
  summaryMaxTokens: number;
  /** The window assumed for a model whose window is unknown (default 128 000). */
  defaultContextWindow: number;
  /** Characters tokenised exactly per request; the rest is counted at the measured ratio (default 32 768). */
  exactCountChars: number;
  /** A tool result longer than this is shortened in what the summariser reads (default 2 000). */
  maxResultChars: number;
}

export function defaultCompactionOptions(): CompactionOptions {
  return {
    enabled: true,
    thresholdPercent: 80,
    keepRecentPercent: 30,
    summaryMaxTokens: 2_000,
    defaultContextWindow: 128_000,
    exactCountChars: 32_768,
    maxResultChars: 2_000,
  };
}

export interface CompactionIo {
  transcript(): Transcript;
  /** The LLM messages of a transcript (images resolved). */
  messages(t: Transcript): Promise<LlmMessage[]>;
  commit(events: NewSessionEvent[]): Promise<void>;
  newId(): string;
}

export interface CompactionTarget {
  /** The session's model: its window is the one the requests must fit. */
  model: ResolvedModel;
  /** The model that writes the summary (the agent's or session's `compaction.model_id`), asked for when one is written; default `model`. */
  summariser?: () => Promise<ResolvedModel | null>;
  /** The agent's or session's `compaction.threshold_percent` (at most the operator's); default the operator's. */
  thresholdPercent?: number;
  system: string;
  tools: readonly LlmToolDefinition[];
  /** The turn it runs in (null: a compaction on demand). */
  turn: TurnRef | null;
  signal: AbortSignal;
}

export type CompactionReason = 'threshold' | 'context_length' | 'manual';

/** Plain-estimate tokens of one transcript entry (its tool results included). */
function entryTokens(e: TranscriptEntry): number {
  if (e.role === 'user') {
    let n = 0;
    for (const p of e.content) n += p.type === 'text' ? String(p['text'] ?? '').length / CHARS_PER_TOKEN : IMAGE_TOKENS;
    return Math.ceil(n) + 4;
  }
  let chars = e.message.content.length;
  for (const c of e.message.tool_calls ?? []) chars += c.name.length + JSON.stringify(c.arguments).length;
  for (const r of e.results.values()) chars += r.content.length;
  return Math.ceil(chars / CHARS_PER_TOKEN) + 4 * (1 + e.results.size);
}

/** One attempt's compactor: it remembers the last step's estimate to calibrate the next. */
export class Compactor {
  readonly #io: CompactionIo;
  readonly #o: CompactionOptions;
  #last: { estimated: number; reported: number } | null = null;
  #sentEstimate = 0;

  constructor(io: CompactionIo, o: CompactionOptions) {
    this.#io = io;
    this.#o = o;
  }

  window(model: ResolvedModel): number {
    return model.context_window ?? this.#o.defaultContextWindow;
  }

  /** The request's size in tokens: counted where a tokenizer exists, else the calibrated estimate. */
  async measure(model: ResolvedModel, req: RequestShape, plain = estimateTokens(req)) {
    this.#sentEstimate = plain;
    return (await countTokens(model.provider.type, req, this.#o.exactCountChars)) ?? calibrated(plain, this.#last);
  }

  /** The vendor's input tokens for the request measured last (calibrates the next estimate). */
  reported(inputTokens: number): void {
    if (inputTokens > 0 && this.#sentEstimate > 0) this.#last = { estimated: this.#sentEstimate, reported: inputTokens };
  }

  /** The messages of the transcript as it is now. */
  messagesNow(): Promise<LlmMessage[]> {
    return this.#io.messages(this.#io.transcript());
  }

  /** The messages of the next reason step, compacted first when they pass the threshold. */
  async messagesFor(target: CompactionTarget): Promise<LlmMessage[]> {
    const messages = await this.#io.messages(this.#io.transcript());
    if (!this.#o.enabled) return messages;
    const req = { system: target.system, messages, tools: target.tools };
    const threshold = Math.min(target.thresholdPercent ?? this.#o.thresholdPercent, this.#o.thresholdPercent);
    const limit = (this.window(target.model) * threshold) / 100;
    const size = requestSize(req);
    // Under the limit even at one token per byte: no count needed (most steps of most sessions).
    if (size.bound <= limit) {
      this.#sentEstimate = size.estimate;
      return messages;
    }
    const tokens = await this.measure(target.model, req, size.estimate);
    if (tokens <= limit) return messages;
    if (!(await this.compact(target, 'threshold', tokens))) return messages;
    return this.#io.messages(this.#io.transcript());
  }

  /**
   * Summarises the history up to a boundary and stores `session.compacted`; false when there
   * is nothing to summarise. `context_length` and `manual` keep only the newest entry verbatim
   * (a compaction on demand compacts a short history too).
   */
  async compact(target: CompactionTarget, reason: CompactionReason, tokensBefore?: number, instructions?: string): Promise<boolean> {
    const t = this.#io.transcript();
    const sizes = t.entries.map(entryTokens);
    const window = this.window(target.model);
    const keepTokens = keepBudget(window, this.#o.keepRecentPercent, sizes, tokensBefore);
    const cut = chooseBoundary({ entries: t.entries, sizes, keepTokens }, reason !== 'threshold');
    if (cut === null) return false;
    const before =
      tokensBefore ??
      (await this.measure(target.model, { system: target.system, messages: await this.#io.messages(t), tools: target.tools }));
    const summariser = (await target.summariser?.()) ?? target.model;
    const rendered = renderForSummary(t.summary, t.entries.slice(0, cut + 1), {
      maxResultChars: this.#o.maxResultChars,
      // What the summariser reads stays well inside its own window.
      maxChars: Math.floor(this.window(summariser) * 0.6) * CHARS_PER_TOKEN,
    });
    const { summary, usage } = await summarise(summariser, {
      rendered,
      instructions,
      maxTokens: this.#o.summaryMaxTokens,
      signal: target.signal,
    });
    const dropped = sizes.slice(0, cut + 1).reduce((a, b) => a + b, 0) + Math.ceil((t.summary?.length ?? 0) / CHARS_PER_TOKEN);
    const after = Math.max(0, before - dropped) + Math.ceil(summary.length / CHARS_PER_TOKEN);
    const { model, model_id, provider_id } = summariser;
    const event = turnEvents.sessionCompacted(this.#io.newId(), target.turn, {
      summary,
      up_to_event_id: t.entries[cut]!.event_id,
      tokens_before: before,
      tokens_after: after,
      reason,
      model,
      model_id,
      provider_id,
      usage,
    });
    await this.#io.commit([event]);
    return true;
  }
}
