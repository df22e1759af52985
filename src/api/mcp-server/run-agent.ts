/**
 * One `tools/call` of `/v1/mcp`: a turn of the agent in a new session of the caller (or in a
 * session the caller names), through the ordinary path (`submitMessage`: queued, run by any
 * worker, in both modes, streamed on the session's SSE), waited for on the session's log like a
 * sub-agent's (no polling), bounded by MCP_SERVER_TURN_TIMEOUT_MS. When the deadline passes or
 * the client goes away or cancels the request first, the turn is cancelled: no one is left to
 * read its answer.
 */
import type { SessionEvent } from '../../../schemas/events.js';
import type { Principal } from '../../auth/index.js';
import type { Bus } from '../../bus/index.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { SessionService } from '../sessions/index.js';
import { waitForChildTurn } from '../sub-agents/index.js';
import type { Acceptance, TurnService } from '../turns/index.js';
import type { ServedAgent } from './agent-tools.js';
import { progressMessage } from './turn-progress.js';

export interface AgentRunDeps {
  bus: Bus<SessionEvent>;
  log: Logger;
  sessions: Pick<SessionService, 'create' | 'get'>;
  turns: Pick<TurnService, 'submitMessage' | 'cancel'>;
  /** MCP_SERVER_TURN_TIMEOUT_MS */
  timeoutMs: number;
}

export interface AgentRun {
  principal: Principal;
  agent: ServedAgent;
  message: string;
  sessionId?: string;
  /** The client went away (the HTTP request closed), cancelled the request (MCP), or the SDK aborted it. */
  signal: AbortSignal;
  /** Called once per finished step of the turn (turn-progress.ts) when the caller asked for progress. */
  onProgress?: (message: string) => void;
}

export type AgentRunOutcome =
  | { ok: true; text: string; session_id: string; turn_id: string }
  | { ok: false; error: string; session_id?: string; turn_id?: string };

export async function runAgentTurn(deps: AgentRunDeps, run: AgentRun): Promise<AgentRunOutcome> {
  const { principal, agent } = run;
  let sessionId = run.sessionId;
  try {
    if (sessionId) {
      const session = await deps.sessions.get(principal, sessionId);
      if (session.agent_id !== agent.id) return { ok: false, error: `Session ${sessionId} is not a session of the agent "${agent.name}"` };
    } else {
      sessionId = (await deps.sessions.create(principal, { agent_id: agent.id, title: `${agent.name} (MCP)`, tags: ['mcp'] })).id;
    }
    let turnId = '';
    // The accepted message's ids, reserved before its job is queued, name the turn.
    const acceptance: Acceptance = {
      reserve: async (value) => {
        turnId = (value as { turn_id: string }).turn_id;
      },
    };
    await deps.turns.submitMessage(principal, sessionId, [{ type: 'text', text: run.message }], {}, [], undefined, acceptance);
    return await waitForAnswer(deps, run, sessionId, turnId);
  } catch (err) {
    // A refusal of the session or turn service (404, 409 busy, a cap) is the caller's to read; anything else is ours.
    if (err instanceof AppError && err.status < 500)
      return { ok: false, error: err.message, ...(sessionId ? { session_id: sessionId } : {}) };
    throw err;
  }
}

async function waitForAnswer(deps: AgentRunDeps, run: AgentRun, sessionId: string, turnId: string): Promise<AgentRunOutcome> {
  const ids = { session_id: sessionId, turn_id: turnId };
  const deadline = AbortSignal.timeout(deps.timeoutMs);
  const signal = AbortSignal.any([run.signal, deadline]);
  let end: Awaited<ReturnType<typeof waitForChildTurn>>;
  try {
    end = await waitForChildTurn(deps.bus.events, sessionId, turnId, signal, { endOnApproval: true, onEvent: progressOf(run) });
  } catch (err) {
    if (!signal.aborted) throw err;
    cancelTurn(deps, run.principal, sessionId);
    const why = deadline.aborted ? `no answer within ${deps.timeoutMs} ms (MCP_SERVER_TURN_TIMEOUT_MS)` : 'the request was cancelled';
    return { ok: false, error: `The turn was cancelled: ${why}`, ...ids };
  }
  switch (end.status) {
    case 'completed':
      return { ok: true, text: end.text, ...ids };
    case 'waiting_for_approval':
      return {
        ok: false,
        error: `The turn waits for a person to approve ${end.tools.join(', ')}: decide in session ${sessionId} (POST /v1/sessions/${sessionId}/approvals or the console); its answer is then in the session`,
        ...ids,
      };
    case 'waiting_for_tool_results':
      cancelTurn(deps, run.principal, sessionId);
      return { ok: false, error: 'The agent asked for client tools, which an MCP call cannot run: the turn was cancelled', ...ids };
    default:
      return { ok: false, error: `The turn ${end.status === 'failed' ? 'failed' : 'was cancelled'}: ${end.error}`, ...ids };
  }
}

function progressOf({ onProgress }: AgentRun): ((e: SessionEvent) => void) | undefined {
  if (!onProgress) return undefined;
  return (e) => {
    const message = progressMessage(e);
    if (message) onProgress(message);
  };
}

/** Best effort and in the background: the call is answered either way. */
function cancelTurn(deps: AgentRunDeps, principal: Principal, sessionId: string): void {
  deps.turns.cancel(principal, sessionId).catch((err: unknown) => {
    if (!(err instanceof AppError && err.status < 500)) deps.log.warn({ err, sessionId }, 'could not cancel an MCP caller’s turn');
  });
}
