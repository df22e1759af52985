/**
 * The tool approval rules as the session holds them now (decision 0101, PATCH of a live
 * session): the attempt's setup read them when it began, but a turn may run for many steps
 * after that (a long reply, a sub-agent call), and a person who tightens the rules while it runs
 * expects the next call to obey. So a step whose reply calls server tools reads them again
 * before the decider asks the policy: one primary-key read per tool-calling step, nothing for a
 * step that only talks.
 */
import { preparedSql, type Store } from '../../src/db/index.js';
import type { ToolApprovalRuleInput } from '../../schemas/approvals.js';
import { compileApprovalPolicy, type ApprovalPolicyOf, type ToolCallRef } from '../../src/turns/index.js';

const RULES_QUERY = preparedSql(
  'turn.approval-rules',
  `select config #> '{session,tool_approvals}' as session_rules, config #> '{agent,tool_approvals}' as agent_rules
  from sessions where id = ? and config is not null`,
);

interface RulesRow {
  session_rules: ToolApprovalRuleInput[] | null;
  agent_rules: ToolApprovalRuleInput[] | null;
}

/** Whether a step's calls include one the policy decides (client tools are the client's own). */
export function callsServerTools(calls: readonly ToolCallRef[], serverTools: ReadonlyMap<string, unknown>): boolean {
  return calls.some((c) => serverTools.has(c.name));
}

/**
 * The policy compiled from the stored rules; `current` when the row or its snapshot is gone
 * (a deleted session stops the attempt by its own signal; a row without a snapshot is one the
 * setup read from the live agent, whose rules it already has).
 */
export async function readApprovalPolicy(
  store: Store,
  sessionId: string,
  current: ApprovalPolicyOf | undefined,
): Promise<ApprovalPolicyOf | undefined> {
  const [row] = await store.sql<RulesRow>(RULES_QUERY, [sessionId]);
  return row ? compileApprovalPolicy(row.session_rules, row.agent_rules) : current;
}
