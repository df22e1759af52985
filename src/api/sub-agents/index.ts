// Sub-agents: the `sub_agents` capability's port onto sessions and turns (docs/decisions/0102-sub-agents.md).
export { createSubAgentRunner } from './runner.js';
export type { SubAgentLimits, SubAgentRunnerDeps } from './runner.js';
export { waitForChildTurn, type ApprovalWait, type ChildTurnEnd } from './child-turn.js';
