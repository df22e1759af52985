import assert from 'node:assert/strict';
import type { EventType } from '../../../schemas/event-types.js';
import { eventExamples } from '../../../schemas/event-documents.js';
import type { NewSessionEvent } from '../../../schemas/events.js';
import type { TestApp } from '../../helpers/app.js';
import type { SseEvent } from '../../helpers/sse-client.js';

/** A session on a fresh agent; returns its id. */
export async function newSession(app: TestApp): Promise<string> {
  const agent = await app.request('POST', '/v1/agents', { body: { name: 'a', system_prompt: 'p' } });
  const s = await app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id } });
  assert.equal(s.status, 201, s.text);
  return s.body.id;
}

/** A frame of a stored event (not the stream's own `connected` / `disconnecting`). */
export const isStored = (e: SseEvent) => e.event !== 'connected' && e.event !== 'disconnecting';

/** Events of these types with the catalogue's example data (replies are checked against the catalogue). */
export function exampleEvents(...types: EventType[]): NewSessionEvent[] {
  return types.map((type) => ({ type, data: eventExamples[type] }) as NewSessionEvent);
}
