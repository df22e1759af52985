import type { SessionEvent } from '../../schemas/events.js';

export interface MessageView {
  id: string;
  role: 'user' | 'agent' | 'tool_result';
  content: Record<string, unknown>[];
  created_at: string;
}

/**
 * Messages are a view of the event log (spec 2.4): user input, the agent's completed outputs
 * and tool results, in log order. Nothing is stored separately.
 */
export function deriveMessages(events: readonly SessionEvent[]): MessageView[] {
  const out: MessageView[] = [];
  for (const e of events) {
    const m = messageOf(e);
    if (m) out.push(m);
  }
  return out;
}

function messageOf(e: SessionEvent): MessageView | null {
  switch (e.type) {
    case 'input.message':
    case 'output.message.completed': {
      return e.data.message ?? null;
    }
    case 'tool.completed': {
      const d = e.data;
      const outcome = d.success ? { result: d.result } : { error: d.error };
      const part = { type: 'tool_result', tool_call_id: d.tool_call_id, tool_name: d.tool_name, success: d.success, ...outcome };
      return { id: e.id, role: 'tool_result', content: [part], created_at: e.ts };
    }
    default:
      return null;
  }
}
