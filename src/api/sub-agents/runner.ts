/**
 * The `sub_agents` capability's port (docs/decisions/0102-sub-agents.md): a call creates its child
 * session (linked to the parent's session, turn and tool call; one per tool call), submits the
 * message through the ordinary turn path (a worker runs it like any turn, in both modes), waits
 * for that turn's end on the child's log, and cancels the child's turn when the parent's call is
 * aborted (cancel, deadline, shutdown). Limits (depth, children per turn, iterations) are the
 * operator's; a call over one is a ToolError the LLM reads.
 */
import type { Bus } from '../../bus/index.js';
import type { SessionEvent } from '../../../schemas/events.js';
import { ToolError, type SubAgentCall, type SubAgentInfo, type SubAgentOutcome, type SubAgentPort } from '../../capabilities/index.js';
import type { Store } from '../../db/index.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { SessionService } from '../sessions/index.js';
import type { Acceptance, TurnService } from '../turns/index.js';
import { waitForChildTurn } from './child-turn.js';

export interface SubAgentLimits {
  /** SUBAGENT_MAX_DEPTH: a session made through the API is depth 0, its children 1, … */
  maxDepth: number;
  /** SUBAGENT_MAX_CHILDREN_PER_TURN */
  maxChildrenPerTurn: number;
  /** SUBAGENT_MAX_ITERATIONS: a child's turns run at most this many steps. */
  maxIterations: number;
}

export interface SubAgentRunnerDeps {
  store: Store;
  bus: Bus<SessionEvent>;
  log: Logger;
  sessions: Pick<SessionService, 'create'>;
  turns: Pick<TurnService, 'submitMessage' | 'cancel'>;
}

interface ParentRow {
  user_id: string;
  subagent_depth: number;
}

interface ChildRow {
  status: string;
  current_turn_id: string | null;
}

const AGENTS_SQL = `select id, name, coalesce(description, '') as description from agents
  where organization_id = ? and status = 'active'
    and (id::text in (select jsonb_array_elements_text(?::jsonb)) or name in (select jsonb_array_elements_text(?::jsonb)))`;

export function createSubAgentRunner(deps: SubAgentRunnerDeps, limits: SubAgentLimits): SubAgentPort {
  const { store, bus, log, sessions, turns } = deps;

  async function agents(orgId: string, refs: readonly string[]): Promise<SubAgentInfo[]> {
    const list = JSON.stringify(refs);
    const rows = await store.sql<SubAgentInfo>(AGENTS_SQL, [orgId, list, list]);
    // In `refs` order; a name several agents carry is offered once (the first found).
    const out: SubAgentInfo[] = [];
    const seen = new Set<string>();
    for (const ref of refs) {
      const row = rows.find((r) => r.id === ref) ?? rows.find((r) => r.name === ref);
      if (!row || seen.has(row.id)) continue;
      out.push(row);
      seen.add(row.id);
    }
    return out;
  }

  async function run(call: SubAgentCall): Promise<SubAgentOutcome> {
    const [parent] = await store.sql<ParentRow>('select user_id, subagent_depth from sessions where id = ? and organization_id = ?', [
      call.parent_session_id,
      call.org_id,
    ]);
    if (!parent) throw new ToolError('The calling session no longer exists');
    const depth = parent.subagent_depth + 1;
    if (depth > limits.maxDepth)
      throw new ToolError(`Sub-agent limit reached: sub-agents nest at most ${limits.maxDepth} deep (SUBAGENT_MAX_DEPTH)`);
    // The child acts for the parent session's user, with a member's rights (never more than the parent's).
    const actor = { org_id: call.org_id, user_id: parent.user_id, role: 'member' as const };
    const child = await asToolError(() =>
      sessions.create(
        { ...actor, operator: false, via: 'api_key' },
        { agent_id: call.agent.id, title: `${call.agent.name} (sub-agent)`, tags: ['sub-agent'] },
        {
          parent_session_id: call.parent_session_id,
          parent_tool_call_id: call.parent_tool_call_id,
          parent_turn_id: call.parent_turn_id,
          depth,
          max_iterations: limits.maxIterations,
          max_children_per_turn: limits.maxChildrenPerTurn,
        },
      ),
    );
    const turnId = await childTurn(child.id, actor, call);
    const usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0 };
    if (!turnId) return { status: 'failed', error: 'its turn could not be found', child_session_id: child.id, usage };
    await call.report?.({ agent_id: call.agent.id, child_session_id: child.id, child_turn_id: turnId });
    let end: Awaited<ReturnType<typeof waitForChildTurn>>;
    try {
      end = await waitForChildTurn(bus.events, child.id, turnId, call.signal);
    } catch (err) {
      if (call.signal.aborted) cancelChild(child.id, actor);
      throw err;
    }
    const nested = { child_session_id: child.id, usage: end.usage };
    if (end.status === 'completed') return { status: 'completed', text: end.text, ...nested };
    if (end.status === 'waiting_for_tool_results') {
      cancelChild(child.id, actor);
      return { status: 'failed', error: 'it asked for client tools, which a sub-agent call cannot run', ...nested };
    }
    return { status: end.status, error: end.error, ...nested };
  }

  /**
   * The turn this call runs in its child: a new child's, submitted now; on a redelivery of the
   * parent's call, the turn the first delivery submitted (the child's current or last turn).
   */
  async function childTurn(childId: string, actor: { org_id: string; user_id: string }, call: SubAgentCall): Promise<string | null> {
    const [row] = await store.sql<ChildRow>('select status, current_turn_id from sessions where id = ?', [childId]);
    if (row && row.status !== 'started') return row.current_turn_id;
    let turnId: string | null = null;
    // The accepted message's ids, reserved before its job is queued (submit-message.ts), name the turn.
    const acceptance: Acceptance = {
      reserve: async (value) => {
        turnId = (value as { turn_id: string }).turn_id;
      },
    };
    await asToolError(() => turns.submitMessage(actor, childId, [{ type: 'text', text: call.message }], {}, [], undefined, acceptance));
    return turnId;
  }

  /** Best effort and in the background: the parent's call is over either way. */
  function cancelChild(childId: string, actor: { org_id: string; user_id: string }): void {
    turns.cancel(actor, childId).catch((err: unknown) => {
      if (!(err instanceof AppError && err.status < 500)) log.warn({ err, sessionId: childId }, 'could not cancel a sub-agent turn');
    });
  }

  return { agents, run };
}

/** A 4xx of the session or turn service (a limit, a quota, an archived agent) as a ToolError with its message. */
async function asToolError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError && err.status < 500) throw new ToolError(err.message, { cause: err });
    throw err;
  }
}
