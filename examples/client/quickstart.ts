// Quick start with the typed client: agent → session → message → streamed reply.
// Run against a started service (bash scripts/start.sh):
//   AGENT_SESSION_KEY=$(cat data/admin-api-key) npx tsx examples/client/quickstart.ts
import { createAgentSessionClient } from '@agent-session-service/client';

const client = createAgentSessionClient({
  baseUrl: process.env['AGENT_SESSION_URL'] ?? 'http://127.0.0.1:8080',
  apiKey: process.env['AGENT_SESSION_KEY'],
});

const agent = await client.agents.create({
  name: 'Quick start',
  system_prompt: 'You are a helpful assistant.',
  capabilities: ['current_time'],
});
const session = await client.sessions.create({ agent_id: agent.id, title: 'Quick start' });

// Streams the reply as it arrives and resolves when the turn has ended.
const result = await client.sessions.sendAndWait(session.id, 'Hello! What can you do?', {
  onEvent(event) {
    if (event.type === 'output.message.delta') process.stdout.write(event.data.delta);
    if (event.type === 'tool.started') console.log(`\n[tool] ${event.data.tool_call.name}`);
  },
});
console.log(`\n[${result.status}] session ${session.id}, ${result.events.length} events`);
