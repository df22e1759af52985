/**
 * The spans of one turn attempt and the trace ids on its events (spec 2.5): a `turn` span (child
 * of the span that queued the job, from its traceparent, in whatever process that ran), a
 * `reason` span per LLM call and an `act` span per tool step, with a `tool` span per execution.
 * The act span runs from `act.started` to `act.completed` (the decider emits both around the
 * tool runs).
 *
 * Events are stamped as they are queued (TurnLog's `stamp` hook), with the step that is running:
 * steps run one at a time, so "the current step" is unambiguous. Tools run in parallel within an
 * act step, so their spans are keyed by `exec_id`: `tool.started` opens one, the matching
 * `tool.completed` is stamped with it and closes it. This keeps the engine's steps unaware of
 * tracing. With export off every span is an id holder and all of this costs a few field writes.
 */
import type { EventData, NewSessionEvent } from '../../schemas/events.js';
import type { TraceAttributes, TraceSpan, Tracing } from '../../src/observability/index.js';

export class TurnTrace {
  readonly #turn: TraceSpan;
  #step: TraceSpan | null = null;
  #stepName: 'reason' | 'act' | null = null;
  readonly #tools = new Map<string, TraceSpan>();

  constructor(tracing: Tracing, traceparent: string | undefined, attributes: TraceAttributes) {
    this.#turn = tracing.startSpan('turn', { parent: traceparent, kind: 'consumer', attributes });
  }

  /** Stamps queued events with the running step's span (or a tool's, or the turn's). */
  readonly stamp = (events: readonly NewSessionEvent[]): void => {
    for (const e of events) {
      const context = (e.context ??= {});
      const execId = context.exec_id;
      if (e.type === 'act.started')
        this.startStep('act', {
          'turn.iteration': e.data.iteration,
          'tool.calls': e.data.tool_calls.length,
        });
      let span = this.#step ?? this.#turn;
      if (e.type === 'act.completed' && this.#step) {
        span.stamp(context);
        this.endStep();
        continue;
      }
      if (execId && e.type === 'tool.started' && this.#step) {
        const call = e.data.tool_call;
        span = this.#step.child(`tool ${call.name}`, {
          attributes: { 'gen_ai.tool.name': call.name, 'gen_ai.tool.call.id': call.id, 'tool.exec_id': execId },
        });
        this.#tools.set(execId, span);
      } else if (execId && e.type === 'tool.completed') {
        const tool = this.#tools.get(execId);
        if (tool) {
          span = tool;
          this.#tools.delete(execId);
          if (!e.data.success) tool.fail(new Error(e.data.error));
          tool.end();
        }
      } else if (e.type === 'llm.generation' && this.#step) {
        this.#step.setAttributes(generationAttributes(e.data));
      }
      span.stamp(context);
    }
  };

  /** Opens the span of a reason or act step; events queued until `endStep` carry it. */
  startStep(name: 'reason' | 'act', attributes: TraceAttributes): void {
    this.endStep();
    this.#stepName = name;
    this.#step = this.#turn.child(name, { attributes });
  }

  /** Before tools run: the act span `act.started` opened, or a new one (a redelivered attempt resumes a step). */
  enterAct(iteration: number, calls: number): void {
    if (this.#stepName !== 'act' || !this.#step) this.startStep('act', { 'turn.iteration': iteration, 'tool.calls': calls });
  }

  /** Records a step's failure on its span (the act span stays open until `act.completed`). */
  failedStep(step: Promise<void>): Promise<void> {
    return step.catch((err: unknown) => {
      this.failStep(err);
      throw err;
    });
  }

  /** Ends the running step's span when the step settles (failed: with the error). */
  traced(step: Promise<void>): Promise<void> {
    return step.then(
      () => this.endStep(),
      (err: unknown) => {
        this.endStep(err);
        throw err;
      },
    );
  }

  /** Records a failure on the running step's span (it stays open until the step ends). */
  failStep(err: unknown): void {
    this.#step?.fail(err);
  }

  endStep(err?: unknown): void {
    for (const tool of this.#tools.values()) tool.end();
    this.#tools.clear();
    if (!this.#step) return;
    if (err !== undefined) this.#step.fail(err);
    this.#step.end();
    this.#step = null;
    this.#stepName = null;
  }

  fail(err: unknown): void {
    this.#turn.fail(err);
  }

  end(): void {
    this.endStep();
    this.#turn.end();
  }
}

function generationAttributes(d: EventData<'llm.generation'>): TraceAttributes {
  return {
    'gen_ai.request.model': d.model,
    'gen_ai.model_id': d.model_id ?? undefined,
    'gen_ai.provider_id': d.provider_id ?? undefined,
    'gen_ai.response.finish_reason': d.stop_reason,
    'gen_ai.usage.input_tokens': d.usage.input_tokens,
    'gen_ai.usage.output_tokens': d.usage.output_tokens,
    'gen_ai.usage.cache_read_tokens': d.usage.cache_read_tokens,
  };
}
