import { defineEntity, p } from '@mikro-orm/core';
import type { CapabilityItemInput } from '../../../schemas/capabilities.js';
import type { ClientToolInput } from '../../../schemas/agents.js';
import type { ToolApprovalRuleInput } from '../../../schemas/approvals.js';
import type { CompactionSettingsInput } from '../../../schemas/compaction.js';
import { newId } from '../../ids.js';

export type AgentStatus = 'active' | 'archived';

/**
 * An agent (spec 2.1), owned by one organisation. Capability items and client tools are kept
 * as sent (JSON); `DELETE` archives (`status`), rows are never removed by the API.
 */
export const Agent = defineEntity({
  name: 'Agent',
  tableName: 'agents',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid().index(),
    name: p.text(),
    description: p.text().nullable(),
    system_prompt: p.text(),
    default_model_id: p.uuid().nullable(),
    tags: p.json<string[]>(),
    capabilities: p.json<CapabilityItemInput[]>(),
    client_tools: p.json<ClientToolInput[]>(),
    max_iterations: p.integer().nullable(),
    /** 0013: earlier-API fields (docs/decisions/0044-earlier-api-aliases.md). */
    display_name: p.text().nullable(),
    /** The model as the client named it (id or model name); `default_model_id` is what it resolved to. */
    model: p.text().nullable(),
    /** False: the tools of one step run one at a time; null means the default (parallel). */
    parallel_tool_calls: p.boolean().nullable(),
    /** 0024: tool approval rules (docs/decisions/0101-tool-approval.md); null: none. */
    tool_approvals: p.json<ToolApprovalRuleInput[]>().nullable(),
    /** 0028: compaction settings (docs/decisions/0103); null: the server's. */
    compaction: p.json<CompactionSettingsInput>().nullable(),
    status: p.string().$type<AgentStatus>(),
    /** The user who created it (null: created before 0012, treated as an admin's); not part of the API view. */
    created_by: p.uuid().nullable(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
