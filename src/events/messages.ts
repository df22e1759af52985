import type { SessionEvent } from '../bus/ports.js';

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
      const m = e.data['message'] as MessageView | undefined;
      return m ?? null;
    }
    case 'tool.completed': {
      const d = e.data;
      const part: Record<string, unknown> = { type: 'tool_result', tool_call_id: d['tool_call_id'], tool_name: d['tool_name'], success: d['success'] };
      if (d['success']) part['result'] = d['result'];
      else part['error'] = d['error'];
      return { id: e.id, role: 'tool_result', content: [part], created_at: e.ts };
    }
    default:
      return null;
  }
}
