/**
 * A reason step with compaction around it (issue 26): the step's messages are compacted first
 * when they pass the threshold, and a vendor's "context length exceeded" compacts once more and
 * runs the step again (as a resumed step: its `reason.started` is stored) instead of failing
 * the turn. The vendor's reported input tokens calibrate the next step's estimate.
 */
import type { NewSessionEvent } from '../../../schemas/events.js';
import { LlmError, type LlmMessage, type ResolvedModel } from '../../../src/llm/index.js';
import { turnEvents, type TurnRef } from '../../../src/turns/index.js';
import type { TurnLog } from '../log/turn-log.js';
import type { TurnInputs } from '../turn-inputs.js';
import type { TurnSetup } from '../turn-setup.js';
import { Compactor, type CompactionOptions, type CompactionTarget } from './compactor.js';

/** The compactor of an attempt, reading and appending through its turn log. */
export function attemptCompactor(
  turnLog: TurnLog,
  inputs: TurnInputs,
  orgId: string,
  newId: () => string,
  o: CompactionOptions,
): Compactor {
  return new Compactor(
    {
      transcript: () => turnLog.transcript,
      messages: (t) => inputs.messages(t, orgId),
      commit: (events) => turnLog.commit(events),
      newId,
    },
    o,
  );
}

/** What a turn's compaction measures and summarises with: its model, prompt and tools, and the session's settings. */
export function compactionTarget(
  inputs: TurnInputs,
  setup: TurnSetup,
  model: ResolvedModel,
  turn: TurnRef,
  signal: AbortSignal,
): CompactionTarget & { turn: TurnRef } {
  const { thresholdPercent } = setup.compaction;
  return {
    ...{ model, system: setup.system, tools: setup.llmTools, turn, signal },
    ...{ summariser: () => inputs.summariser(setup), ...(thresholdPercent === null ? {} : { thresholdPercent }) },
  };
}

/** Runs `run` (one reason step) with the compacted messages; `again`: the retry after a refusal. */
export async function reasonCompacting(
  compactor: Compactor,
  target: CompactionTarget,
  reportedInput: () => number,
  run: (messages: LlmMessage[], again: boolean) => Promise<void>,
): Promise<void> {
  const messages = await compactor.messagesFor(target);
  const before = reportedInput();
  try {
    await run(messages, false);
  } catch (err) {
    if (!(err instanceof LlmError && err.contextExceeded) || target.signal.aborted) throw err;
    if (!(await compactor.compact(target, 'context_length'))) throw err;
    await run(await compactor.messagesNow(), true);
    return;
  }
  compactor.reported(reportedInput() - before);
}

/** What a user who asks for a compaction of too short a history is told (decision 0103). */
export const NOTHING_TO_COMPACT =
  'Nothing to compact: the history needs at least one exchange before the newest entry, which stays verbatim';

/**
 * A compaction turn's one step (POST …/compact): everything but the newest entry is summarised
 * into `session.compacted`. With nothing to summarise, the events that end the turn as
 * `nothing_to_compact`; else none. A cancel aborts the summary call: nothing is stored.
 */
export async function compactOnDemand(
  target: CompactionTarget & { turn: NonNullable<CompactionTarget['turn']> },
  compactor: Compactor,
  instructions: string | undefined,
  newId: () => string,
): Promise<NewSessionEvent[]> {
  if (await compactor.compact(target, 'manual', undefined, instructions)) return [];
  return [turnEvents.turnFailed(newId(), target.turn, { error: NOTHING_TO_COMPACT, error_code: 'nothing_to_compact', iterations: 0 })];
}
