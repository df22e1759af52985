// A client tool: the agent asks, this process answers (tool.call_requested → POST tool-results).
//   AGENT_SESSION_KEY=$(cat data/admin-api-key) npx tsx examples/client/client-tools.ts
import { createAgentSessionClient } from '@agent-session-service/client';

const client = createAgentSessionClient({
  baseUrl: process.env['AGENT_SESSION_URL'] ?? 'http://127.0.0.1:8080',
  apiKey: process.env['AGENT_SESSION_KEY'],
});

const agent = await client.agents.create({
  name: 'Asks the user',
  system_prompt: 'Ask the user with ask_user when you need to know something.',
  client_tools: [
    {
      type: 'client',
      name: 'ask_user',
      description: 'Ask the user a question in the client UI.',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    },
  ],
});
const session = await client.sessions.create({ agent_id: agent.id });

// With the built-in llmsim model, "@tool NAME {JSON}" makes the model call that tool.
const result = await client.sessions.sendAndWait(session.id, '@tool ask_user {"q":"What is your favourite colour?"}', {
  tools: {
    ask_user: (args) => {
      console.log(`agent asks: ${String(args['q'])}`);
      return { answer: 'blue' };
    },
  },
});
console.log(`reply: ${result.reply}`);
