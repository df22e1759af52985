/**
 * Tool approval (human in the loop, docs/decisions/0101-tool-approval.md): the per-tool policy
 * of agents and sessions, and the body of POST /v1/sessions/{id}/approvals.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ref } from './common.js';

/** Rules per agent or session: a tenant's list is matched on every server tool call of a turn. */
export const MAX_TOOL_APPROVAL_RULES = 64;

export const ToolApprovalPolicy = Type.Union([Type.Literal('always_allow'), Type.Literal('always_ask'), Type.Literal('deny')], {
  $id: 'ToolApprovalPolicy',
  description: '`always_ask`: the call waits for a person (POST …/approvals); `deny`: the LLM gets a refusal as the result.',
});

export const ToolApprovalRule = Type.Object(
  {
    tool: Type.String({
      minLength: 1,
      maxLength: 128,
      description:
        'A tool name or a glob over tool names (`*` any run of characters, `?` one, `{a,b}` alternatives), MCP tools by their namespaced name (`server__tool`, `github__*`).',
    }),
    policy: ref(ToolApprovalPolicy),
  },
  { $id: 'ToolApprovalRule', additionalProperties: false },
);

/** On agents and sessions; the session's rules are matched first, then the agent's; the first match wins; none: `always_allow`. */
export const ToolApprovals = Type.Array(ref(ToolApprovalRule), {
  maxItems: MAX_TOOL_APPROVAL_RULES,
  description:
    "Per-tool approval policy of server tools (built-in capabilities and MCP tools; client tools are the client's own): the session's rules first, then the agent's; the first rule whose `tool` matches decides; no match: `always_allow`.",
});

export const ToolApprovalDecision = Type.Object(
  {
    tool_call_id: Type.String({ minLength: 1, maxLength: 256 }),
    approved: Type.Boolean(),
    reason: Type.Optional(Type.String({ maxLength: 1000, description: "Why it was denied: the LLM sees it as the tool's error result." })),
  },
  { $id: 'ToolApprovalDecision', additionalProperties: false },
);

export const SubmitApprovalsBody = Type.Object(
  { approvals: Type.Array(ref(ToolApprovalDecision), { minItems: 1, maxItems: 100 }) },
  { $id: 'SubmitApprovalsBody', additionalProperties: false },
);

export const SubmitApprovalsResponse = Type.Object(
  {
    accepted: Type.Integer({ minimum: 0, description: 'Decisions recorded now (a call decided before is not decided again).' }),
    status: Type.Ref('SessionStatus'),
  },
  { $id: 'SubmitApprovalsResponse' },
);

export type ToolApprovalPolicyValue = Static<typeof ToolApprovalPolicy>;
export type ToolApprovalRuleInput = Static<typeof ToolApprovalRule>;
export type ToolApprovalDecisionInput = Static<typeof ToolApprovalDecision>;

export const approvalSchemas = [ToolApprovalPolicy, ToolApprovalRule, ToolApprovalDecision, SubmitApprovalsBody, SubmitApprovalsResponse];
