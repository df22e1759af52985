// Follow a session's events with the resuming iterator: it reconnects after connection cycling,
// network errors and (with auth: 'stream-token') token expiry, and never yields an event twice.
//   AGENT_SESSION_KEY=$(cat data/admin-api-key) npx tsx examples/client/tail-events.ts [session-id]
import { createAgentSessionClient } from '@agent-session-service/client';

const client = createAgentSessionClient({
  baseUrl: process.env['AGENT_SESSION_URL'] ?? 'http://127.0.0.1:8080',
  apiKey: process.env['AGENT_SESSION_KEY'],
});

let sessionId = process.argv[2];
if (!sessionId) {
  const agent = await client.agents.create({ name: 'Tail demo', system_prompt: 'You help.' });
  sessionId = (await client.sessions.create({ agent_id: agent.id })).id;
  await client.sessions.sendMessage(sessionId, 'one message to watch');
}

const stream = client.sessions.stream(sessionId, {
  exclude: ['llm.generation'],
  onReconnect: (info) => console.error(`(reconnecting after ${info.reason}, resuming after ${info.lastEventId})`),
});
for await (const event of stream) {
  switch (event.type) {
    case 'output.message.delta':
      console.log(`${event.sequence} ${event.type} ${JSON.stringify(event.data.delta)}`);
      break;
    case 'turn.failed':
      console.log(`${event.sequence} ${event.type} ${event.data.error_code}`);
      break;
    default:
      console.log(`${event.sequence} ${event.type}`);
  }
  if (event.type === 'session.idled' && !process.argv[2]) break;
}
