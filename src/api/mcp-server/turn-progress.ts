/**
 * What an MCP caller that asked for progress (`_meta.progressToken`) is told while its turn
 * runs: one notification per finished step of the turn, i.e. each model step (`reason.completed`)
 * and each tool call (`tool.completed`). The caller owns the session, so nothing here is more
 * than its own log shows.
 */
import type { SessionEvent } from '../../../schemas/events.js';

/** The progress message for an event of the turn; null for an event that finishes no step. */
export function progressMessage(e: SessionEvent): string | null {
  switch (e.type) {
    case 'reason.completed': {
      const { iteration, tool_calls: calls } = e.data;
      return calls > 0
        ? `Step ${iteration}: the agent calls ${calls} tool${calls === 1 ? '' : 's'}`
        : `Step ${iteration}: the agent answered`;
    }
    case 'tool.completed':
      return `Tool ${e.data.tool_name} ${e.data.success ? 'completed' : 'failed'}`;
    default:
      return null;
  }
}
