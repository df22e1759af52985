import type { SessionView } from '../../../schemas/sessions.js';
import type { SessionConfig } from '../../db/index.js';

interface SessionRow {
  id: string;
  organization_id: string;
  harness_id: string;
  agent_id?: string | null;
  title?: string | null;
  tags: string[];
  model_id?: string | null;
  capabilities: { ref: string; config?: Record<string, unknown> }[];
  status: string;
  features: string[];
  parent_session_id?: string | null;
  parent_tool_call_id?: string | null;
  /** Lazy on the entity: present when the query loaded it (create, get, update), absent in lists. */
  config?: SessionConfig | null;
  created_at: Date;
  updated_at: Date;
}

/** The public JSON of a session row (spec 2.3), the number of its messages waiting for a turn, and its own approval rules when the row's configuration was loaded. */
export function sessionView(s: SessionRow, queuedMessages: number): SessionView {
  const rules = s.config?.session?.tool_approvals;
  return {
    id: s.id,
    organization_id: s.organization_id,
    harness_id: s.harness_id,
    agent_id: s.agent_id ?? null,
    title: s.title ?? null,
    tags: s.tags,
    model_id: s.model_id ?? null,
    capabilities: s.capabilities,
    status: s.status as SessionView['status'],
    features: s.features,
    parent_session_id: s.parent_session_id ?? null,
    parent_tool_call_id: s.parent_tool_call_id ?? null,
    queued_messages: queuedMessages,
    ...(rules?.length ? { tool_approvals: rules } : {}),
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
  };
}
