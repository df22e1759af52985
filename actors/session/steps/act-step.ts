/**
 * The act phase: server tool calls run in parallel, at most `maxParallel` (10) at a time,
 * each bracketed by `tool.started` (stored before the tool runs, so a redelivered turn knows
 * it was interrupted and never runs it twice) and `tool.completed`, which is stored before the
 * call counts as done: an attempt that ends right after a tool returned (shutdown, a failed
 * append elsewhere) must not leave a succeeded call looking interrupted. Each call has its own
 * timeout. Failures become `tool.completed` with `success:false` and a short message: a
 * `ToolError`'s own text, or a generic one for anything else (logged, never shown). Results and
 * error texts are redacted of the session's secret values before they are recorded; reading
 * those values waits out a short database outage (`secretCheckWaitMs`) before the result is
 * withheld.
 */
import type { NewSessionEvent } from '../../../schemas/events.js';
import {
  ToolError,
  type NestedTurnInfo,
  type ResolvedTool,
  type SubagentStart,
  type ToolContext,
  type ToolResult,
} from '../../../src/capabilities/index.js';
import { isDatabaseUnavailable } from '../../../src/db/index.js';
import type { Logger } from '../../../src/log.js';
import { retry, retryPolicies } from '../../../src/retry/index.js';
import { redactSecrets, redactionTable } from './secret-redaction.js';
import { STORAGE_UNAVAILABLE_MESSAGE, toolContextFor, type SessionToolStorage, type ToolSessionRef } from './tool-context.js';
import { turnEvents, type MessagePart, type ToolCallRef, type TurnRef } from '../../../src/turns/index.js';

export const DEFAULT_MAX_PARALLEL_TOOLS = 10;
/** Long enough for a PostgreSQL restart or failover of 10-15 s (chaos runs stop it for 10 s). */
export const DEFAULT_SECRET_CHECK_WAIT_MS = 30_000;
/** Longest tool error text passed on to the LLM and clients. */
const MAX_ERROR_CHARS = 1_000;
export const TOOL_FAILED_MESSAGE = 'Tool execution failed';
/** Shown instead of a result that could not be checked for secret values (fail closed). */
export const RESULT_WITHHELD_MESSAGE = 'Tool result withheld: it could not be checked for secret values';

type Redactor = (text: string) => string;

export interface ActStepIo {
  /**
   * Appends and waits until stored (tool.started before the tool runs, tool.completed after).
   * `result`: a tool's outcome in hand, which must be recorded even if the claim is lost
   * meanwhile (turn-log.ts hands it over).
   */
  commit(events: NewSessionEvent[], opts?: { result?: boolean }): Promise<void>;
  newId(): string;
  now(): Date;
  log: Logger;
}

export interface ActStepInput {
  turn: TurnRef;
  session: ToolSessionRef;
  calls: ToolCallRef[];
  tools: ReadonlyMap<string, ResolvedTool>;
  storage: SessionToolStorage;
  /** Fires on cancel (or when the shutdown window ran out): running tools are told, no new ones start. */
  signal: AbortSignal;
  /** Fires when the process starts shutting down: no new tools start, running ones finish. */
  drain?: AbortSignal;
  timeoutMs: number;
  maxParallel: number;
  /** How long the secret check of a result retries an unreachable database before withholding it, in ms. */
  secretCheckWaitMs?: number;
}

class ToolTimeoutError extends Error {
  constructor(ms: number) {
    super(`Tool timed out after ${ms} ms`);
    this.name = 'ToolTimeoutError';
  }
}

/**
 * Runs the calls; resolves when every call has its `tool.completed` stored. Throws the abort
 * reason when aborted, and the drain reason when draining left calls unstarted (the next
 * attempt runs those).
 */
export async function runActStep(io: ActStepIo, p: ActStepInput): Promise<void> {
  let next = 0;
  let redactor: Promise<Redactor> | undefined;
  // Loaded after the first call finishes (a call may have set a secret), then shared by the step.
  const loadRedactor = () => (redactor ??= secretRedactor(p.storage, p.secretCheckWaitMs ?? DEFAULT_SECRET_CHECK_WAIT_MS, p.signal));
  const worker = async () => {
    while (next < p.calls.length && !p.signal.aborted && !p.drain?.aborted) {
      const call = p.calls[next++]!;
      await runOne(io, p, call, loadRedactor);
    }
  };
  await Promise.all(Array.from({ length: Math.min(p.maxParallel, p.calls.length) }, worker));
  if (p.signal.aborted) throw p.signal.reason;
  if (next < p.calls.length && p.drain?.aborted) throw p.drain.reason;
}

/** Redacts with the session's secret values; no storage (tests, storage not wired) means no secrets. */
async function secretRedactor(storage: SessionToolStorage, waitMs: number, signal: AbortSignal): Promise<Redactor> {
  try {
    // A short database outage must not turn a succeeded call into a failed one (issue 13).
    const outage = { ...retryPolicies.storeOutage, deadlineMs: waitMs };
    const values = await retry(() => storage.secrets.allValues(), outage, { retryable: isDatabaseUnavailable, signal });
    const table = redactionTable(values);
    return (text) => redactSecrets(text, table);
  } catch (err) {
    if (err instanceof ToolError && err.message === STORAGE_UNAVAILABLE_MESSAGE) return (text) => text;
    throw err;
  }
}

async function runOne(io: ActStepIo, p: ActStepInput, call: ToolCallRef, loadRedactor: () => Promise<Redactor>): Promise<void> {
  const tool = p.tools.get(call.name);
  const display = tool?.display_name ?? call.name;
  const execId = io.newId();
  const source = tool?.capability_id ?? null;
  await io.commit([turnEvents.toolStarted(io.newId(), p.turn, execId, call, display, source)]);
  const startedAt = Date.now();
  let outcome: { result: MessagePart[] } | { error: string };
  let nested: NestedTurnInfo | undefined;
  // A sub-agent's tool records its child session on this log as soon as the child's turn is queued.
  const reportSubagent = async (start: SubagentStart) =>
    io.commit([turnEvents.subagentStarted(io.newId(), p.turn, execId, { tool_call_id: call.id, ...start })]);
  try {
    if (!tool) throw new ToolError(`Unknown tool: ${call.name}`);
    const result = await runWithTimeout(tool, call, p, { call: { id: call.id, turn_id: p.turn.turn_id }, reportSubagent });
    outcome = { result: result.content.map((part) => ({ ...part })) };
    nested = result.nested;
  } catch (err) {
    // Aborted by cancel: the cancellation pairs this call with a 'cancelled' result.
    if (p.signal.aborted && !(err instanceof ToolError)) return;
    outcome = { error: errorText(err, call, io.log) };
    if (err instanceof ToolError) nested = err.nested;
  }
  try {
    const redact = await loadRedactor();
    outcome =
      'result' in outcome
        ? { result: outcome.result.map((part) => (typeof part['text'] === 'string' ? { ...part, text: redact(part['text']) } : part)) }
        : { error: redact(outcome.error) };
  } catch (err) {
    io.log.error({ err, tool: call.name, toolCallId: call.id }, 'could not load secrets to redact a tool result');
    outcome = { error: RESULT_WITHHELD_MESSAGE };
  }
  const duration_ms = Date.now() - startedAt;
  const id = io.newId();
  await io.commit(
    [
      'result' in outcome
        ? turnEvents.toolSucceeded(id, p.turn, execId, { call, display_name: display, result: outcome.result, duration_ms, source, nested })
        : turnEvents.toolFailed(id, p.turn, execId, { call, display_name: display, error: outcome.error, duration_ms, source, nested }),
    ],
    { result: true },
  );
}

async function runWithTimeout(
  tool: ResolvedTool,
  call: ToolCallRef,
  p: ActStepInput,
  turn: Pick<ToolContext, 'call' | 'reportSubagent'>,
): Promise<ToolResult> {
  const timeoutMs = tool.timeoutMs ?? p.timeoutMs;
  const ac = new AbortController();
  const onAbort = () => ac.abort(p.signal.reason);
  p.signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new ToolTimeoutError(timeoutMs);
      ac.abort(err);
      reject(err);
    }, timeoutMs);
  });
  // A tool that ignores its signal still cannot hold the turn past the timeout or a cancel.
  const aborted = new Promise<never>((_, reject) => ac.signal.addEventListener('abort', () => reject(ac.signal.reason), { once: true }));
  try {
    const ctx = toolContextFor(p.session, p.storage, tool.config, ac.signal, () => new Date(), turn);
    return await Promise.race([tool.execute(call.arguments, ctx), timedOut, aborted]);
  } finally {
    clearTimeout(timer);
    p.signal.removeEventListener('abort', onAbort);
    aborted.catch(() => undefined);
    timedOut.catch(() => undefined);
  }
}

function errorText(err: unknown, call: ToolCallRef, log: Logger): string {
  if (err instanceof ToolError || err instanceof ToolTimeoutError) return err.message.slice(0, MAX_ERROR_CHARS);
  log.error({ err, tool: call.name, toolCallId: call.id }, 'tool failed');
  return TOOL_FAILED_MESSAGE;
}
