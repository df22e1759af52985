/**
 * The LangGraph.js peer of bench/real-path: model → get_current_time → model, the same
 * conversation the service runs, against the same zero-latency fake: ChatOpenAI, or ChatAnthropic
 * with BENCH_PROVIDER=anthropic (run.ts --provider).
 * Copied next to the installed packages (bench/.cache/langgraph) by bench/real-path/peers/langgraph.ts; not part of the
 * service or its tests.
 */
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';

const getCurrentTime = tool(
  async ({ timezone }) => {
    const zone = timezone || 'UTC';
    const now = new Date();
    const local = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'full', timeStyle: 'long' }).format(now);
    return JSON.stringify({ utc: now.toISOString(), unix: Math.floor(now.getTime() / 1000), timezone: zone, local });
  },
  {
    name: 'get_current_time',
    description: 'Returns the current date and time: UTC, unix seconds, and the local time in an IANA time zone.',
    schema: z.object({ timezone: z.string().optional().describe('IANA time zone, e.g. "Europe/Paris". Default: UTC.') }),
  },
);

const chat =
  process.env.BENCH_PROVIDER === 'anthropic'
    ? new ChatAnthropic({
        model: 'gpt-bench',
        apiKey: process.env.BENCH_API_KEY,
        anthropicApiUrl: process.env.BENCH_ANTHROPIC_BASE_URL,
        streaming: true,
        maxRetries: 0,
      })
    : new ChatOpenAI({
        model: 'gpt-bench',
        apiKey: process.env.BENCH_API_KEY,
        configuration: { baseURL: process.env.BENCH_OPENAI_BASE_URL },
        streaming: true,
        streamUsage: true,
        maxRetries: 0,
      });
const model = chat.bindTools([getCurrentTime]);

const SYSTEM = 'You are a benchmark agent.';

async function callModel(state) {
  const response = await model.invoke([{ role: 'system', content: SYSTEM }, ...state.messages]);
  return { messages: [response] };
}

function route(state) {
  const last = state.messages.at(-1);
  return last?.tool_calls?.length ? 'tools' : END;
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode('model', callModel)
  .addNode('tools', new ToolNode([getCurrentTime]))
  .addEdge(START, 'model')
  .addConditionalEdges('model', route, ['tools', END])
  .addEdge('tools', 'model')
  .compile();
