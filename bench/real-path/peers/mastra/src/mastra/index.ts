/**
 * The Mastra peer of bench/real-path (issue 34): model → get_current_time → model against the
 * same zero-latency fake, through the Mastra server (`mastra build`, then its Hono server).
 * Two agents: `bench-memory` keeps the conversation with Mastra's documented Memory (message
 * history in libSQL, `mastra.db`), a new thread per turn as our sessions are; `bench-stateless`
 * stores nothing (the floor reference). Copied next to the installed packages
 * (bench/.cache/mastra) by bench/real-path/peers/mastra.ts; not part of the service or its tests.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { LibSQLStore } from '@mastra/libsql';
import { Memory } from '@mastra/memory';
import { z } from 'zod';

const getCurrentTime = createTool({
  id: 'get_current_time',
  description: 'Returns the current date and time: UTC, unix seconds, and the local time in an IANA time zone.',
  inputSchema: z.object({ timezone: z.string().optional().describe('IANA time zone, e.g. "Europe/Paris". Default: UTC.') }),
  execute: async ({ timezone }) => {
    const zone = timezone || 'UTC';
    const now = new Date();
    const local = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'full', timeStyle: 'long' }).format(now);
    return { utc: now.toISOString(), unix: Math.floor(now.getTime() / 1000), timezone: zone, local };
  },
});

const vendor = createOpenAI({ baseURL: process.env.BENCH_OPENAI_BASE_URL, apiKey: process.env.BENCH_API_KEY });
// Chat Completions, the API the fake (and our openai_completions provider) speaks.
const model = vendor.chat('gpt-bench');
const instructions = 'You are a benchmark agent.';

export const mastra = new Mastra({
  agents: {
    'bench-memory': new Agent({
      id: 'bench-memory',
      name: 'bench-memory',
      instructions,
      model,
      tools: { get_current_time: getCurrentTime },
      memory: new Memory({ options: { lastMessages: 10 } }),
    }),
    'bench-stateless': new Agent({
      id: 'bench-stateless',
      name: 'bench-stateless',
      instructions,
      model,
      tools: { get_current_time: getCurrentTime },
    }),
  },
  storage: new LibSQLStore({ id: 'bench-storage', url: process.env.BENCH_MASTRA_DB ?? 'file:./mastra.db' }),
  // Default logging would print a line per request; ours run at LOG_LEVEL=warn too.
  logger: false,
});
