/**
 * One reason step: a streamed LLM call turned into events (spec 6.2): `reason.started`,
 * `output.message.started`, batched `output.message.delta`s (about 100 ms), thinking events
 * when the model thinks, then `output.message.completed` (with the tool calls as `tool_call`
 * parts), `llm.generation` and `reason.completed` in one append: the step becomes durable
 * exactly when its result is stored. That append is not atomic on NATS: the turn log sends a
 * lost tail again, and a later attempt's decider completes a closing set of which only a
 * prefix was stored (`stepClosingEvents`).
 */
import type { NewSessionEvent } from '../../../schemas/events.js';
import {
  createDeltaBatcher,
  type DeltaBatcher,
  type LlmControls,
  type LlmMessage,
  type LlmToolDefinition,
} from '../../../src/llm/index.js';
import type { ResolvedModel } from '../../../src/llm/index.js';
import {
  stepClosingEvents,
  textPart,
  turnEvents,
  ZERO_USAGE,
  type GenerationFacts,
  type MessagePart,
  type ModelRef,
  type ToolCallRef,
  type TurnRef,
  type Usage,
} from '../../../src/turns/index.js';

import type { ReplyChecker } from './structured-reply.js';

export interface ReasonStepIo {
  /** Queues events for appending (group-committed, in call order); throws once appends have failed. */
  push(events: NewSessionEvent[]): void;
  newId(): string;
  now(): Date;
}

export interface ReasonStepInput {
  turn: TurnRef;
  iteration: number;
  /** `reason.started` is stored already (a redelivered step): only the generation is redone. */
  resumed: boolean;
  model: ResolvedModel;
  system: string;
  messages: LlmMessage[];
  tools: readonly LlmToolDefinition[];
  controls: LlmControls;
  /** Groups the session's requests in the vendor's prompt cache (the session id). */
  cacheKey?: string;
  signal: AbortSignal;
  deltaIntervalMs: number;
  /** With a response format: checks a final reply (no tool calls) before its step is stored. */
  checkReply?: ReplyChecker;
}

export function modelRef(m: ResolvedModel): ModelRef {
  return { model: m.model, model_id: m.model_id, provider_id: m.provider_id };
}

/**
 * Streams one LLM call into the log (queued, not awaited: the step's result is durable once
 * the turn log has stored it). Rejects with the provider's LlmError or the abort reason.
 */
export async function runReasonStep(io: ReasonStepIo, p: ReasonStepInput): Promise<void> {
  const { turn } = p;
  const started = Date.now();
  const opening: NewSessionEvent[] = p.resumed ? [] : [turnEvents.reasonStarted(io.newId(), turn, p.iteration)];
  opening.push(turnEvents.outputStarted(io.newId(), turn, p.model.model, p.iteration));
  io.push(opening);

  // Deltas are queued from timers: a failure is kept and rethrown at the end of the stream.
  let failure: unknown;
  const send = (events: NewSessionEvent[]) => {
    try {
      io.push(events);
    } catch (err) {
      failure ??= err;
    }
  };
  const text = createDeltaBatcher({
    intervalMs: p.deltaIntervalMs,
    onBatch: (b) => send([turnEvents.outputDelta(io.newId(), turn, b.delta)]),
  });
  let thinking: DeltaBatcher | null = null;
  const closeThinking = () => {
    if (!thinking) return;
    thinking.flush();
    send([turnEvents.thinkingCompleted(io.newId(), turn, thinking.accumulated)]);
    thinking = null;
  };
  const calls: ToolCallRef[] = [];
  let usage: Usage = ZERO_USAGE;
  let stopReason = 'end_turn';
  let providerState: string | undefined;
  let thought = '';
  try {
    const stream = p.model.provider.stream({
      model: p.model.model,
      system: p.system,
      messages: p.messages,
      tools: [...p.tools],
      controls: p.controls,
      ...(p.cacheKey ? { cache_key: p.cacheKey } : {}),
      signal: p.signal,
    });
    for await (const ev of stream) {
      switch (ev.type) {
        case 'thinking_delta':
          if (!thinking) {
            send([turnEvents.thinkingStarted(io.newId(), turn, p.model.model)]);
            thinking = createDeltaBatcher({
              intervalMs: p.deltaIntervalMs,
              onBatch: (b) => send([turnEvents.thinkingDelta(io.newId(), turn, b.delta)]),
            });
          }
          thinking.push(ev.text);
          thought += ev.text;
          break;
        case 'text_delta':
          closeThinking();
          text.push(ev.text);
          break;
        case 'tool_call':
          closeThinking();
          calls.push({ id: ev.id, name: ev.name, arguments: ev.arguments });
          break;
        case 'usage':
          usage = { input_tokens: ev.input_tokens, output_tokens: ev.output_tokens, cache_read_tokens: ev.cache_read_tokens };
          break;
        case 'done':
          stopReason = ev.stop_reason;
          providerState = ev.provider_state;
          break;
      }
    }
    closeThinking();
    text.flush();
  } finally {
    text.close();
    (thinking as DeltaBatcher | null)?.close();
  }
  if (failure) throw failure;

  const content: MessagePart[] = text.accumulated ? [textPart(text.accumulated)] : [];
  for (const c of calls) content.push({ type: 'tool_call', id: c.id, name: c.name, arguments: c.arguments });
  const message = {
    id: io.newId(),
    role: 'agent' as const,
    content,
    created_at: io.now().toISOString(),
    ...(thought ? { thinking: thought } : {}),
  };
  const structured = p.checkReply && !calls.length ? await p.checkReply(text.accumulated) : undefined;
  const model = modelRef(p.model);
  const generation: GenerationFacts = { stop_reason: stopReason, duration_ms: Date.now() - started, usage };
  const completed = turnEvents.outputCompleted(io.newId(), turn, {
    message,
    model,
    usage,
    generation,
    ...(providerState ? { provider_state: providerState } : {}),
    ...(structured ? { structured } : {}),
  });
  io.push([completed, ...stepClosingEvents(io.newId, turn, { iteration: p.iteration, model, toolCalls: calls.length, generation })]);
}
