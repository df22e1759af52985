/**
 * One attempt at a claimed turn (the imperative shell of style rule 21): open the log view,
 * begin the turn (its first events, written here only), load the setup, then loop — decide,
 * do, append — until the turn is done, suspended for client tools, or idle.
 */
import type { TurnClaim } from '../../src/bus/index.js';
import { newIdAfter } from '../../src/ids.js';
import type { Logger } from '../../src/log.js';
import { runActStep } from './steps/act-step.js';
import { awaitHandover, recordsInterrupted } from './handover-grace.js';
import { modelRef, runReasonStep } from './steps/reason-step.js';
import { replyChecker } from './steps/structured-reply.js';
import {
  asTerminal,
  decideTurnStep,
  StaleDecisionError,
  TurnCancelled,
  TurnStoppedError,
  turnEvents,
  type ToolCallRef,
  type TurnDecision,
  type TurnJobData,
  type TurnRef,
} from '../../src/turns/index.js';
import type { ToolSessionRef } from './steps/tool-context.js';
import { TurnLog, type FoldedSession, type StartingPoint } from './log/turn-log.js';
import { TurnTrace } from './turn-trace.js';
import { watchAttempt } from './turn-watch.js';
import { createIdTracing } from '../../src/observability/index.js';
import type { TurnRunnerDeps, TurnRunnerOptions } from './turn-runner-deps.js';
import { decideInputOf, type TurnSetup } from './turn-setup.js';
import { llmControls, TurnInputs } from './turn-inputs.js';
import { beginTurn, changeStatus, endTurnForGood, type TurnBoundsContext } from './turn-bounds.js';
import type { LlmMessage } from '../../src/llm/index.js';
import type { Compactor } from './compaction/compactor.js';
import { attemptCompactor, compactionTarget, compactOnDemand, reasonCompacting } from './compaction/reason-compacting.js';

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
  /** Stops the heartbeat, the log poll and the signal subscription. */
  #unwatch: (() => void) | null = null;
  #turnLog: TurnLog | null = null;
  #setup: TurnSetup | null = null;
  #inputs: TurnInputs | null = null;
  #lastId: string | undefined;
  #compactor: Compactor | null = null;
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
    this.#unwatch?.();
    if (err !== undefined) this.#trace.fail(err);
    this.#trace.end();
  }

  /** Runs the turn until it is done, suspended or idle; returns the fold to cache. */
  async run(cached: StartingPoint | undefined): Promise<FoldedSession | null> {
    const inputs = new TurnInputs(this.#deps, this.#o.maxIterations, this.#sessionId, this.#job);
    this.#inputs = inputs;
    const turnLog = await this.#openLog(cached);
    this.#turnLog = turnLog;
    await beginTurn(this.#bounds(), turnLog, (lastId) => {
      if (!this.#lastId || this.#lastId < lastId) this.#lastId = lastId;
    });
    this.#setup = await inputs.setup;
    if (!this.#setup) throw new TurnStoppedError('session_deleted');
    this.#unwatch = watchAttempt(
      { claim: this.#claim, signals: this.#deps.bus.signals, log: this.#log, leaseMs: this.#o.leaseMs, pollMs: this.#o.pollMs },
      turnLog,
      (reason) => this.abort(reason),
    );
    return this.#loop(turnLog, this.#setup);
  }

  async #loop(turnLog: TurnLog, setup: TurnSetup): Promise<FoldedSession | null> {
    for (;;) {
      if (this.#drain.signal.aborted) {
        await turnLog.flush();
        throw this.#drain.signal.reason;
      }
      const model = this.#inputs?.resolved ? modelRef(this.#inputs.resolved) : null;
      const decision = decideTurnStep(turnLog.state, decideInputOf(setup, turnLog.transcript.usage, model, this.newId));
      try {
        const ended = await this.#perform(turnLog, setup, decision);
        if (ended) return turnLog.folded();
      } catch (err) {
        const reason = this.#ac.signal.reason;
        if (reason instanceof TurnStoppedError) throw reason;
        if (err instanceof TurnStoppedError) throw err;
        const failure = turnLog.failure;
        if (failure && !turnLog.dropUnappended()) throw failure;
        // Another attempt started a call this one was starting: decide on what the log holds.
        if (failure instanceof StaleDecisionError) continue;
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
          !(await changeStatus(this.#bounds(), turnLog, (handled) =>
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
        if (!(await changeStatus(this.#bounds(), turnLog, () => this.#deps.status.markWaiting(this.#sessionId, this.#job.turn_id))))
          return false;
        await this.#claim.ack();
        this.#log.info({ pending: d.pending.length }, 'turn waiting for client tool results');
        return true;
      case 'reason':
        await this.#reason(turnLog, setup, d.iteration, d.resumed);
        return false;
      case 'compact':
        // The target first: it makes the compactor (arguments are evaluated in order).
        turnLog.push(
          await compactOnDemand(await this.#compactionTarget(turnLog, setup), this.#compactor!, this.#job.instructions, this.newId),
        );
        return false;
      case 'act': {
        const session = { session_id: this.#sessionId, org_id: setup.orgId, may_use_connections: this.#job.user_id === setup.ownerUserId };
        this.#trace.enterAct(d.iteration, d.calls.length);
        this.#acting = true;
        try {
          await this.#trace.failedStep(this.#act(turnLog, setup, d.calls, session));
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

  /** The models and prompt a compaction measures and summarises with (the compactor made on first use). */
  async #compactionTarget(turnLog: TurnLog, setup: TurnSetup) {
    const model = await this.#inputs!.model(setup, turnLog.state.controls);
    this.#compactor ??= attemptCompactor(turnLog, this.#inputs!, setup.orgId, this.newId, this.#o.compaction);
    return compactionTarget(this.#inputs!, setup, model, this.#job.turn, this.#ac.signal);
  }

  async #reason(turnLog: TurnLog, setup: TurnSetup, iteration: number, resumed: boolean): Promise<void> {
    const llm = llmControls(turnLog.state.controls);
    const target = await this.#compactionTarget(turnLog, setup);
    this.#trace.startStep('reason', { 'turn.iteration': iteration, 'gen_ai.request.model': target.model.model });
    const step = (messages: LlmMessage[], again: boolean) =>
      runReasonStep(
        { push: (events) => turnLog.push(events), newId: this.newId, now: () => new Date() },
        {
          ...target,
          iteration,
          resumed: resumed || again,
          messages,
          controls: llm,
          checkReply: replyChecker(this.#deps.replySchemas, llm.response_format, { orgId: setup.orgId, sessionId: this.#sessionId }),
          deltaIntervalMs: this.#o.deltaIntervalMs,
          // The vendor's prompt cache groups a session's requests (OpenAI `prompt_cache_key`).
          cacheKey: this.#sessionId,
        },
      );
    await this.#trace.traced(reasonCompacting(this.#compactor!, target, () => turnLog.transcript.usage.input_tokens, step));
  }

  /** After too many failed attempts: record the failure so the session is usable again. */
  async failForGood(): Promise<void> {
    await endTurnForGood(this.#bounds(), this.#turnLog ?? (await this.#openLog()));
  }

  #bounds(): TurnBoundsContext {
    const { status, queue } = this.#deps;
    return {
      status,
      queue,
      claim: this.#claim,
      job: this.#job,
      sessionId: this.#sessionId,
      newId: this.newId,
      log: this.#log,
      cancelEventsWaitMs: this.#o.cancelEventsWaitMs,
    };
  }

  #openLog(cached?: StartingPoint): Promise<TurnLog> {
    return TurnLog.open(
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
        appendRetry: this.#o.appendRetry,
        log: this.#log,
        onRead: this.#deps.folds?.eventsRead,
      },
      cached,
    );
  }
}
