/** Which endpoints an event goes to: pure, over the organisation's active endpoints as cached. */
import type { WebhookFilterValue } from '../../schemas/webhooks.js';

export interface EndpointSubscription {
  id: string;
  event_types: readonly string[];
  filter: WebhookFilterValue;
  /** When the endpoint was created (ms): events from before it are not its (the outbox's look-back may see some). */
  since: number;
}

export interface SessionFacts {
  organization_id: string;
  agent_id: string | null;
  tags: readonly string[];
}

export function matches(
  endpoint: EndpointSubscription,
  event: { type: string; ts: string },
  sessionId: string,
  session: SessionFacts,
): boolean {
  if (!endpoint.event_types.includes(event.type) || Date.parse(event.ts) < endpoint.since) return false;
  const { agent_ids, session_ids, session_tags } = endpoint.filter;
  if (agent_ids?.length && (session.agent_id === null || !agent_ids.includes(session.agent_id))) return false;
  if (session_ids?.length && !session_ids.includes(sessionId)) return false;
  if (session_tags?.length && !session_tags.some((t) => session.tags.includes(t))) return false;
  return true;
}
