/**
 * The tool approval policy of a turn (decision 0101): the session's rules, then the agent's;
 * the first rule whose glob matches the tool name decides; no match: `always_allow`. Globs run
 * in the linear-time engine (src/patterns), so a tenant's pattern costs no more than its length
 * on the turn's thread. A rule that does not compile (the API refuses those on write) asks.
 */
import type { ToolApprovalPolicyValue, ToolApprovalRuleInput } from '../../schemas/approvals.js';
import { InvalidRequestError } from '../errors.js';
import { compileGlob } from '../patterns/index.js';
import type { ApprovalPolicyOf } from './approval-step.js';

export function compileApprovalPolicy(
  sessionRules: readonly ToolApprovalRuleInput[] | null | undefined,
  agentRules: readonly ToolApprovalRuleInput[] | null | undefined,
): ApprovalPolicyOf | undefined {
  const rules = [...(sessionRules ?? []), ...(agentRules ?? [])];
  if (!rules.length) return undefined;
  const compiled = rules.map(compileRule);
  return (name) => compiled.find((r) => r.test(name))?.policy ?? 'always_allow';
}

/** The API's check on write: 400 for a pattern the linear-time engine refuses. */
export function checkApprovalRules<T extends ToolApprovalRuleInput>(rules: readonly T[]): T[] {
  for (const rule of rules) {
    try {
      compileGlob(rule.tool);
    } catch {
      throw new InvalidRequestError(
        `Invalid request: tool_approvals: the pattern ${JSON.stringify(rule.tool.slice(0, 64))} cannot be used`,
      );
    }
  }
  return rules.map((r) => ({ ...r }));
}

function compileRule(rule: ToolApprovalRuleInput): { test: (name: string) => boolean; policy: ToolApprovalPolicyValue } {
  try {
    return { test: compileGlob(rule.tool), policy: rule.policy };
  } catch {
    // Fail closed: a rule no one can read (stored before a stricter check) asks about every tool.
    return { test: () => true, policy: 'always_ask' };
  }
}
