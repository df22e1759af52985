/**
 * One attempt at a claimed turn (the imperative shell of style rule 21): open the log view,
 * make sure the turn's first events are there, load the setup, then loop — decide, do,
 * append — until the turn is done, suspended for client tools, or idle.
 */
import type { NewSessionEvent } from '../../schemas/events.js';
import type { TurnClaim } from '../../src/bus/ports.js';
import { NotFoundError } from '../../src/errors.js';
import { newIdAfter } from '../../src/ids.js';
import { LlmError, type LlmControls, type LlmImagePart } from '../../src/llm/index.js';
import type { Logger } from '../../src/log.js';
import { runActStep } from './steps/act-step.js';
import { awaitHandover, recordsInterrupted } from './handover-grace.js';
import { pickModelId, type ResolvedModel } from '../../src/llm/index.js';
import { modelRef, runReasonStep } from './steps/reason-step.js';
import { decideTurnStep, type TurnDecision } from '../../src/turns/index.js';
import { asTerminal, TerminalTurnError, TurnStoppedError } from '../../src/turns/index.js';
import { cancelEvents, turnEvents, ZERO_USAGE, type MessagePart, type ToolCallRef, type TurnRef } from '../../src/turns/index.js';
import type { ToolSessionRef } from './steps/tool-context.js';
import type { TurnJobData } from '../../src/turns/index.js';
import { TurnLog, type FoldedSession } from './log/turn-log.js';
import { TurnTrace } from './turn-trace.js';
import { createIdTracing } from '../../src/observability/tracing.js';
import type { TurnRunnerDeps, TurnRunnerOptions } from './turn-runner-deps.js';
import { loadTurnSetup, type TurnSetup } from './turn-setup.js';
import { toLlmMessages } from './log/transcript.js';

/** Marks a turn attempt aborted because the user cancelled (the loop then closes the turn). */
class TurnCancelled extends Error {
  constructor() {
    super('turn cancelled');
    this.name = 'TurnCancelled';
  }
}

/** One attempt's state: the log view, watchers, and the lazily loaded setup and model. */
export class TurnAttempt {
  readonly #deps: TurnRunnerDeps;
  readonly #o: TurnRunnerOptions;
  readonly #claim: TurnClaim;
  readonly #job: TurnJobData & { turn: TurnRef };
  readonly #log: Logger;
  readonly #ac = new AbortController();
  /** Fires when the process begins shutting down (see `drain`). */
  readonly #drain = new AbortController();
  /** An act step is running: a drain lets its tools finish instead of aborting them. */
  #acting = false;
  /** Whether this attempt already gave a live predecessor its chance to hand tool results over. */
  #handoverAwaited = false;
  readonly #timers: NodeJS.Timeout[] = [];
  #unsubscribe: (() => void) | null = null;
  #turnLog: TurnLog | null = null;
  #setup: TurnSetup | null = null;
  #model: ResolvedModel | null = null;
  /** The model resolution started early (fresh turns); its failure surfaces at the first reason step. */
  #modelLoading: Promise<ResolvedModel | null> | null = null;
  #lastId: string | undefined;
  readonly #images = new Map<string, Promise<LlmImagePart | null>>();
  readonly #trace: TurnTrace;

  constructor(deps: TurnRunnerDeps, o: TurnRunnerOptions, claim: TurnClaim, job: TurnJobData & { turn: TurnRef }, log: Logger) {
    this.#deps = deps;
    this.#o = o;
    this.#claim = claim;
    this.#job = job;
    this.#log = log;
    this.#trace = new TurnTrace(deps.tracing ?? createIdTracing(), job.traceparent, {
      'session.id': claim.turn.session_id,
      'turn.id': job.turn_id,
      'turn.kind': job.kind,
      'turn.delivery': claim.deliveryCount,
    });
  }

  get #sessionId(): string {
    return this.#claim.turn.session_id;
  }

  readonly newId = (): string => (this.#lastId = newIdAfter(this.#lastId));

  abort(reason: Error): void {
    if (!this.#ac.signal.aborted) this.#ac.abort(reason);
  }

  /**
   * Shutdown begins: the attempt stops at the next step boundary and its turn goes back to
   * the queue. Running tools finish and their results are stored (a tool's side effects
   * happened; recording it as interrupted would be false); an LLM stream is aborted at once,
   * since a reason step is simply run again by the next attempt.
   */
  drain(reason: Error): void {
    if (this.#drain.signal.aborted) return;
    this.#drain.abort(reason);
    if (!this.#acting) this.abort(reason);
  }

  /** `err`: why the attempt ended without finishing (recorded on the turn span). */
  close(err?: unknown): void {
    for (const t of this.#timers) clearInterval(t);
    this.#unsubscribe?.();
    if (err !== undefined) this.#trace.fail(err);
    this.#trace.end();
  }

  /** Runs the turn until it is done, suspended or idle; returns the fold to cache. */
  async run(cached: FoldedSession | undefined): Promise<FoldedSession | null> {
    const setupLoading = this.#loadSetupEarly();
    const turnLog = await TurnLog.open(
      {
        events: this.#deps.bus.events,
        claim: this.#claim,
        sessionId: this.#sessionId,
        turn: this.#job.turn,
        onFolded: (state) => {
          if (state.cancelled) this.abort(new TurnCancelled());
        },
        mayPredateCache: this.#claim.deliveryCount > 1 || this.#job.kind === 'resume',
        stamp: this.#trace.stamp,
        appendRetryDelaysMs: this.#o.appendRetryDelaysMs,
      },
      cached,
    );
    this.#turnLog = turnLog;
    await this.#begin(turnLog);
    this.#setup = await setupLoading;
    if (!this.#setup) throw new TurnStoppedError('session_deleted');
    this.#watch(turnLog);
    return this.#loop(turnLog, this.#setup);
  }

  /**
   * The setup and (for a fresh turn, whose controls travel in the job) the model do not depend
   * on the log: load them while the log is being read.
   */
  #loadSetupEarly(): Promise<TurnSetup | null> {
    // The API builds the preamble through the catalogue (turn-events.ts): read it as its union.
    const input = (this.#job.preamble as readonly NewSessionEvent[] | undefined)?.find((e) => e.type === 'input.message');
    const modelId = input?.type === 'input.message' ? input.data.message.controls?.['model_id'] : undefined;
    const controlsModelId = typeof modelId === 'string' ? modelId : undefined;
    const setupLoading = loadTurnSetup(
      { store: this.#deps.store, capabilities: this.#deps.capabilities, defaultMaxIterations: this.#o.maxIterations },
      this.#sessionId,
      controlsModelId,
    );
    setupLoading.catch(() => undefined);
    if (this.#job.preamble) {
      this.#modelLoading = setupLoading.then((setup) => (setup ? this.#resolveModel(setup, controlsModelId) : null));
      this.#modelLoading.catch(() => undefined);
    }
    return setupLoading;
  }

  /**
   * A start job carries the turn's first events (input.message … session.activated) and this
   * attempt is their one writer. The session row decides before anything is appended: a start
   * whose request was answered with an error (voided while its job was in flight) leaves no
   * trace, and a cancel requested before the turn began is this attempt's to write. An earlier
   * attempt may have stored a part of them: what the log lacks goes out under the job's ids.
   */
  async #begin(turnLog: TurnLog): Promise<void> {
    const preamble = this.#job.preamble;
    const s = turnLog.state;
    if (this.#job.kind !== 'start' || !preamble || (s.hasTurnStarted && s.activated)) return;
    const begun = await this.#deps.status.begin(this.#sessionId, this.#job.turn_id);
    if (!begun) throw new TurnStoppedError('void');
    // The API minted these ids; this attempt's own come after them, whatever this host's clock says.
    const lastId = preamble.at(-1)!.id!;
    if (!this.#lastId || this.#lastId < lastId) this.#lastId = lastId;
    const missing = preamble.filter((e) => !turnLog.hasStored(e.id!));
    turnLog.push(missing, { stamped: true, mayBeStored: !begun.first });
    if (begun.first && begun.cancelRequested) turnLog.push(cancelEvents(this.newId, this.#job.turn, ZERO_USAGE));
  }

  #watch(turnLog: TurnLog): void {
    const every = (ms: number, fn: () => Promise<unknown>, what: string) => {
      const t = setInterval(() => void fn().catch((err: unknown) => this.#log.warn({ err }, what)), ms);
      t.unref();
      this.#timers.push(t);
    };
    every(Math.max(100, Math.floor(this.#o.leaseMs / 3)), () => this.#claim.heartbeat(), 'claim heartbeat failed');
    every(this.#o.pollMs, () => turnLog.syncIfBehind(), 'log poll failed');
    this.#unsubscribe = this.#deps.bus.signals.subscribe(this.#sessionId, (signal) => {
      if (signal.type === 'deleted') this.abort(new TurnStoppedError('session_deleted'));
      else if (signal.type === 'cancel') void turnLog.sync().catch((err: unknown) => this.#log.warn({ err }, 'log sync on cancel failed'));
    });
  }

  async #loop(turnLog: TurnLog, setup: TurnSetup): Promise<FoldedSession | null> {
    for (;;) {
      if (this.#drain.signal.aborted) {
        await turnLog.flush();
        throw this.#drain.signal.reason;
      }
      const decision = decideTurnStep(turnLog.state, {
        maxIterations: setup.maxIterations,
        clientToolNames: setup.clientToolNames,
        toolSource: (name) => setup.serverTools.get(name)?.capability_id ?? null,
        sessionUsage: turnLog.transcript.usage,
        model: this.#model ? modelRef(this.#model) : null,
        now: new Date(),
        newId: this.newId,
      });
      try {
        const ended = await this.#perform(turnLog, setup, decision);
        if (ended) return turnLog.folded();
      } catch (err) {
        const reason = this.#ac.signal.reason;
        if (reason instanceof TurnStoppedError) throw reason;
        if (err instanceof TurnStoppedError) throw err;
        const failure = turnLog.failure;
        if (failure && !turnLog.dropRefused()) throw failure;
        if (turnLog.state.cancelled) continue; // aborted by the cancel: decide again, which closes the turn
        const terminal = asTerminal(failure ?? err);
        if (!terminal) throw err;
        this.#log.info({ code: terminal.errorCode, error: terminal.message }, 'turn failed');
        const iterations = turnLog.state.steps.length;
        turnLog.push([
          turnEvents.turnFailed(this.newId(), this.#job.turn, { error: terminal.message, error_code: terminal.errorCode, iterations }),
        ]);
      }
    }
  }

  /** Does what the decision says; true when the attempt is over. */
  async #perform(turnLog: TurnLog, setup: TurnSetup, d: TurnDecision): Promise<boolean> {
    switch (d.type) {
      case 'done':
        await turnLog.flush();
        await this.#claim.ack();
        return true;
      case 'emit':
        if (!this.#handoverAwaited && recordsInterrupted(d.events)) {
          this.#handoverAwaited = true;
          await awaitHandover({
            claim: this.#claim,
            sync: () => turnLog.sync(),
            results: () => turnLog.state.steps.at(-1)?.completed.size ?? 0,
            signal: this.#ac.signal,
          });
          return false; // decide again on what the log holds now
        }
        turnLog.push(d.events);
        return false;
      case 'idle':
        await turnLog.flush();
        if (
          !(await this.#transition(turnLog, (handled) =>
            this.#deps.status.markIdle(this.#sessionId, this.#job.turn_id, turnLog.transcript.usage, handled),
          ))
        )
          return false;
        await turnLog.commit(d.events);
        await this.#claim.ack();
        this.#log.info({ iterations: turnLog.state.steps.length }, 'turn finished');
        return true;
      case 'wait_for_client':
        await turnLog.flush();
        if (!(await this.#transition(turnLog, () => this.#deps.status.markWaiting(this.#sessionId, this.#job.turn_id)))) return false;
        await this.#claim.ack();
        this.#log.info({ pending: d.pending.length }, 'turn waiting for client tool results');
        return true;
      case 'reason':
        await this.#reason(turnLog, setup, d.iteration, d.resumed);
        return false;
      case 'act': {
        const session = { session_id: this.#sessionId, org_id: setup.orgId, may_use_connections: this.#job.user_id === setup.ownerUserId };
        this.#trace.enterAct(d.iteration, d.calls.length);
        this.#acting = true;
        try {
          await this.#failedStep(this.#act(turnLog, setup, d.calls, session));
        } finally {
          this.#acting = false;
        }
        return false;
      }
    }
  }

  async #act(turnLog: TurnLog, setup: TurnSetup, calls: ToolCallRef[], session: ToolSessionRef): Promise<void> {
    await runActStep(
      { commit: (events, opts) => turnLog.commit(events, opts), newId: this.newId, now: () => new Date(), log: this.#log },
      {
        turn: this.#job.turn,
        session,
        calls,
        tools: setup.serverTools,
        storage: await this.#deps.toolStorage(session),
        signal: this.#ac.signal,
        drain: this.#drain.signal,
        timeoutMs: this.#o.toolTimeoutMs,
        secretCheckWaitMs: this.#o.secretCheckWaitMs,
        // `parallel_tool_calls: false` (earlier public API) runs the step's tools one at a time.
        maxParallel: setup.parallelToolCalls ? this.#o.maxParallelTools : 1,
      },
    );
  }

  /**
   * A status change that a pending, not yet logged cancel may refuse (session-status.ts). Then
   * waits for the cancel's events and returns false so the loop closes the turn as cancelled.
   */
  async #transition(turnLog: TurnLog, change: (cancelHandled: boolean) => Promise<boolean>): Promise<boolean> {
    if (await change(turnLog.state.cancelled)) return true;
    const row = await this.#deps.status.read(this.#sessionId);
    if (!row) throw new TurnStoppedError('session_deleted');
    if (row.cancel_requested_turn_id !== this.#job.turn_id || turnLog.state.cancelled) return true;
    const deadline = Date.now() + this.#o.cancelEventsWaitMs;
    while (!turnLog.state.cancelled && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      await turnLog.sync();
    }
    if (turnLog.state.cancelled) return false;
    this.#log.warn('cancel requested but its events never arrived; finishing the turn');
    return change(true);
  }

  async #reason(turnLog: TurnLog, setup: TurnSetup, iteration: number, resumed: boolean): Promise<void> {
    const controls = turnLog.state.controls;
    this.#model ??= (await this.#modelLoading) ?? (await this.#resolveModel(setup, controls['model_id'] as string | undefined));
    const messages = await toLlmMessages(turnLog.transcript, (part: MessagePart) => this.#image(setup.orgId, String(part['image_id'])));
    this.#trace.startStep('reason', { 'turn.iteration': iteration, 'gen_ai.request.model': this.#model.model });
    await this.#traced(
      runReasonStep(
        { push: (events) => turnLog.push(events), newId: this.newId, now: () => new Date() },
        {
          turn: this.#job.turn,
          iteration,
          resumed,
          model: this.#model,
          system: setup.system,
          messages,
          tools: setup.llmTools,
          controls: llmControls(controls),
          signal: this.#ac.signal,
          deltaIntervalMs: this.#o.deltaIntervalMs,
        },
      ),
    );
  }

  /** Records a step's failure on its span (the act span stays open until `act.completed`). */
  #failedStep(step: Promise<void>): Promise<void> {
    return step.catch((err: unknown) => {
      this.#trace.failStep(err);
      throw err;
    });
  }

  /** Ends the running step's span when the step settles (failed: with the error). */
  #traced(step: Promise<void>): Promise<void> {
    return step.then(
      () => this.#trace.endStep(),
      (err: unknown) => {
        this.#trace.endStep(err);
        throw err;
      },
    );
  }

  /** An image of the history, loaded once per attempt (every reason step sends the whole history). */
  #image(orgId: string, imageId: string): Promise<LlmImagePart | null> {
    let loading = this.#images.get(imageId);
    if (!loading) {
      loading = this.#deps.images.load(orgId, imageId);
      this.#images.set(imageId, loading);
    }
    return loading;
  }

  async #resolveModel(setup: TurnSetup, controlsModelId: string | undefined): Promise<ResolvedModel> {
    const id = pickModelId(controlsModelId, setup.modelIds.session, setup.modelIds.agent, setup.modelIds.harness);
    try {
      // The setup read joined the model it picked; a resumed turn's controls may name another.
      if (id !== null && id === setup.model.id) return await this.#deps.models.resolveRow(setup.orgId, id, setup.model.row);
      return await this.#deps.models.resolve(setup.orgId, id);
    } catch (err) {
      if (err instanceof NotFoundError) throw new TerminalTurnError('Model not found', 'llm_error', { cause: err });
      if (err instanceof LlmError) throw new TerminalTurnError(err.message, 'llm_error', { cause: err });
      throw err;
    }
  }

  /** After too many failed attempts: record the failure so the session is usable again. */
  async failForGood(): Promise<void> {
    const turnLog =
      this.#turnLog ??
      (await TurnLog.open({
        events: this.#deps.bus.events,
        claim: this.#claim,
        sessionId: this.#sessionId,
        turn: this.#job.turn,
        stamp: this.#trace.stamp,
        appendRetryDelaysMs: this.#o.appendRetryDelaysMs,
      }));
    const s = turnLog.state;
    if (!s.outcome && !s.idled) {
      const failed = turnEvents.turnFailed(this.newId(), this.#job.turn, {
        error: 'Internal error',
        error_code: 'internal_error',
        iterations: s.steps.length,
      });
      await turnLog.commit([failed]);
    }
    if (!turnLog.state.idled) {
      await this.#deps.status.markIdle(this.#sessionId, this.#job.turn_id, turnLog.transcript.usage, true);
      await turnLog.commit([
        turnEvents.sessionIdled(this.newId(), this.#job.turn, { iterations: s.steps.length, usage: turnLog.transcript.usage }),
      ]);
    }
    await this.#claim.ack();
  }
}

function llmControls(c: Readonly<Record<string, unknown>>): LlmControls {
  const out: LlmControls = {};
  if (typeof c['max_tokens'] === 'number') out.max_tokens = c['max_tokens'];
  if (typeof c['temperature'] === 'number') out.temperature = c['temperature'];
  if (c['reasoning_effort'] === 'low' || c['reasoning_effort'] === 'medium' || c['reasoning_effort'] === 'high')
    out.reasoning_effort = c['reasoning_effort'];
  return out;
}
