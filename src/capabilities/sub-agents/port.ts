/**
 * What the `sub_agents` capability needs from the rest of the service: the organisation's agents,
 * and running one turn of an agent in a child session. Implemented where sessions and turns live
 * (src/api/sub-agents/); the capability is built before them, so the port is bound late.
 */
import type { NestedTurnInfo, SubagentStart } from '../types.js';

/** An agent the caller may offer as a tool. */
export interface SubAgentInfo {
  id: string;
  name: string;
  description: string;
}

export interface SubAgentCall {
  org_id: string;
  parent_session_id: string;
  parent_turn_id: string;
  parent_tool_call_id: string;
  agent: SubAgentInfo;
  message: string;
  /** Fires on the parent's cancel or deadline: the child's turn is cancelled too. */
  signal: AbortSignal;
  /** Records `subagent.started` on the parent's log once the child's turn is queued. */
  report?: (start: SubagentStart) => Promise<void>;
}

/** The child turn's end: its final text (completed) or why it did not complete. */
export type SubAgentOutcome = NestedTurnInfo & ({ status: 'completed'; text: string } | { status: 'failed' | 'cancelled'; error: string });

export interface SubAgentPort {
  /** The active agents of the organisation among `refs` (ids or names), in `refs` order. */
  agents(orgId: string, refs: readonly string[]): Promise<SubAgentInfo[]>;
  /** Runs the call's turn in its child session (the one this tool call made before, on a redelivery). Limits throw ToolError. */
  run(call: SubAgentCall): Promise<SubAgentOutcome>;
}
