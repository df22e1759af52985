/**
 * The turn log's history work at a session's length, in-process (issue 26 item 2): per session, a
 * view extended event by event and read at each of a turn's two reason steps (`toLlmMessages`,
 * the request's measure, the Chat Completions body), and a stored fold extended beside it with the
 * same events as new objects (as the log gives them back), from which the next turn's view
 * starts. CPU per turn over each block of 100 turns, so a change to the folds' lineage or the
 * per-list values can be compared at turn 1,000 in seconds, without the LLM call:
 *
 *   node --import tsx bench/long-session/fold-micro.ts [turns=1000] [sessions=10]
 */
import { requestSize } from '../../actors/session/compaction/token-count.js';
import { emptyTranscript, extendTranscript, toLlmMessages, type Transcript } from '../../actors/session/log/transcript.js';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import { chatBody } from '../../src/llm/openai-completions.js';
import { turnEvents, type TurnRef } from '../../src/turns/turn-events.js';

const turns = Number(process.argv[2] ?? 1000);
const sessions = Number(process.argv[3] ?? 10);
const model = { model: 'm', model_id: null, provider_id: null };
const usage = { input_tokens: 2, output_tokens: 1, cache_read_tokens: 0 };
const tools = [{ name: 'get_current_time', description: 'The current time', parameters: { type: 'object' } }];
const noImage = async () => null;
let seq = 0;
const stamp = (e: NewSessionEvent): SessionEvent => ({
  ...e,
  id: `e${++seq}`,
  ts: '',
  session_id: 's',
  sequence: seq,
  context: e.context ?? {},
});

/** Turn n: the question, a tool call, its result, the answer (sizes like bench/real-path's fake). */
function turnEventsOf(n: number): NewSessionEvent[] {
  const turn: TurnRef = { turn_id: `t${n}`, input_message_id: `m${n}` };
  const reply = (text: string, calls: string[]) =>
    turnEvents.outputCompleted('o', turn, {
      message: {
        id: `a${n}`,
        role: 'agent',
        content: [
          ...(text ? [{ type: 'text', text }] : []),
          ...calls.map((id) => ({ type: 'tool_call', id, name: 'get_current_time', arguments: { timezone: 'UTC' } })),
        ],
        created_at: '',
      },
      model,
      usage,
    });
  return [
    turnEvents.inputMessage(
      'i',
      { id: `u${n}`, role: 'user', content: [{ type: 'text', text: `question ${n} `.repeat(20) }], created_at: '' },
      turn,
    ),
    reply('', [`c${n}`]),
    turnEvents.toolSucceeded('r', turn, 'x', {
      call: { id: `c${n}`, name: 'get_current_time', arguments: {} },
      display_name: 'get_current_time',
      result: [{ type: 'text', text: `time ${n} `.repeat(10) }],
      duration_ms: 1,
    }),
    reply(`answer ${n} `.repeat(30), []),
  ];
}

async function reasonStep(t: Transcript): Promise<void> {
  const messages = await toLlmMessages(t, noImage);
  requestSize({ system: 'You are a benchmark agent.', messages, tools });
  chatBody({ model: 'm', system: 'You are a benchmark agent.', messages, tools, controls: {} }, true);
}

const stored: Transcript[] = Array.from({ length: sessions }, () => emptyTranscript());
let cpu = process.cpuUsage();
for (let n = 0; n < turns; n++) {
  for (let s = 0; s < sessions; s++) {
    let view = stored[s]!;
    for (const [i, event] of turnEventsOf(n).map(stamp).entries()) {
      view = extendTranscript(view, [event]);
      if (i === 0 || i === 2) await reasonStep(view);
      stored[s] = extendTranscript(stored[s]!, [structuredClone(event)]);
    }
  }
  if ((n + 1) % 100 === 0) {
    const used = process.cpuUsage(cpu);
    const perTurn = (used.user + used.system) / 1000 / sessions / 100;
    console.log(
      `turns ${n - 98}-${n + 1}: ${perTurn.toFixed(3)} ms CPU a turn, heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`,
    );
    cpu = process.cpuUsage();
  }
}
