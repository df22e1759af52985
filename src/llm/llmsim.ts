import { LlmError } from './errors.js';
import { defaultLlmsimLimits, parseLlmsimScript, type LlmsimLimits, type LlmsimScript } from './llmsim-directives.js';
import { abortableSleep } from '../retry/index.js';
import { streamWithRetries, type LlmRetryOptions } from './retry.js';
import { exampleOf } from './llmsim-json.js';
import { replySchemaOf, STRUCTURED_REPAIR_PREFIX } from './structured-output.js';
import { toolCallEvent } from './tool-arguments.js';
import type { LlmMessage, LlmProvider, LlmRequest, LlmStreamEvent, LlmToolMessage, LlmUserMessage } from './types.js';

/** The one model the simulator lists. */
export const LLMSIM_MODEL_ID = 'llmsim';
/**
 * The id the built-in model has where a model id is a UUID (an agent's or harness's
 * `default_model_id`, a session's `model_id`): naming `llmsim` there stores this.
 */
export const LLMSIM_MODEL_UUID = '00000000-0000-4000-8000-00000000115d';
const FILLER = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor'.split(' ');
const MAX_RESULT_CHARS = 200;
/** Bound on remembered `@fail … times=N` counters per provider instance. */
const MAX_TRACKED_FAILURES = 1000;

/** The code points `\s` matches (ECMAScript WhiteSpace and LineTerminator). */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * Whitespace-separated words, as `text.split(/\s+/).filter(Boolean).length` counts them, without
 * the arrays: every call counts the whole history, once per simulated model call.
 */
export function words(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

function messageWords(m: LlmMessage): number {
  if (m.role === 'user') return m.content.reduce((n, p) => n + (p.type === 'text' ? words(p.text) : 1), 0);
  if (m.role === 'tool') return words(m.content);
  return words(m.content) + (m.tool_calls?.length ?? 0);
}

function lastUser(messages: LlmMessage[]): LlmUserMessage | undefined {
  return messages.findLast((m): m is LlmUserMessage => m.role === 'user');
}

/** The message whose directives drive the step: the last user message, or the one a repair note answers. */
function scriptMessage(messages: LlmMessage[]): { message: LlmUserMessage | undefined; repair: boolean } {
  const isNote = (m: LlmMessage) => m.role === 'user' && userText(m).startsWith(STRUCTURED_REPAIR_PREFIX);
  const last = lastUser(messages);
  if (!last || !isNote(last)) return { message: last, repair: false };
  return { message: messages.findLast((m): m is LlmUserMessage => m.role === 'user' && !isNote(m)), repair: true };
}

/** The reply of a structured step: `@json`'s text, else the smallest value of the format's schema. */
function structuredText(req: LlmRequest, script: LlmsimScript): string | null {
  if (script.json) return script.json.text;
  const format = req.controls.response_format;
  return format ? JSON.stringify(exampleOf(replySchemaOf(format))) : null;
}

function userText(m: LlmUserMessage | undefined): string {
  return (m?.content ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
}

function trailingToolResults(messages: LlmMessage[]): LlmToolMessage[] {
  const out: LlmToolMessage[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === 'tool'; i--) out.unshift(messages[i] as LlmToolMessage);
  return out;
}

function summarise(results: LlmToolMessage[]): string {
  const parts = results.map((r) => `${r.name}${r.is_error ? ' (error)' : ''}: ${r.content.slice(0, MAX_RESULT_CHARS)}`);
  return `Received ${results.length} tool result${results.length === 1 ? '' : 's'}. ${parts.join('; ')}`;
}

/** The visible text of a step: filler tokens, an echo, or a summary of tool results. */
function replyTokens(req: LlmRequest, script: LlmsimScript, afterTools: boolean): string[] {
  const spaced = (ws: string[]) => ws.map((w, i) => (i === 0 ? w : ` ${w}`));
  const structured = structuredText(req, script);
  const callsTools = script.loop || (script.tools.length && !afterTools);
  if (structured !== null && !callsTools) return [structured];
  if (afterTools && !script.loop) return spaced(summarise(trailingToolResults(req.messages)).split(' '));
  if (script.tokens) return spaced(Array.from({ length: script.tokens.count }, (_, i) => FILLER[i % FILLER.length]!));
  if (script.tools.length || script.loop) return script.echo && script.text ? spaced(script.text.split(' ')) : [];
  const images = lastUser(req.messages)?.content.filter((p) => p.type === 'image').length ?? 0;
  const text = (script.text || 'OK') + (images ? ` [${images} image${images === 1 ? '' : 's'}]` : '');
  return spaced(text.split(' '));
}

/** Waits of one call, `maxWaitMs` of them in all: past that, the rest streams without delay. */
function waitBudget(maxWaitMs: number, signal: AbortSignal | undefined): (ms: number) => Promise<void> {
  let left = maxWaitMs;
  return async (ms) => {
    const wait = Math.min(ms, left);
    left -= wait;
    if (wait > 0) await abortableSleep(wait, signal);
    else if (signal?.aborted) throw signal.reason;
  };
}

/** One simulated model call, as a neutral event stream. */
async function* simulate(req: LlmRequest, script: LlmsimScript, failNow: boolean, limits: LlmsimLimits): AsyncGenerator<LlmStreamEvent> {
  const pause = waitBudget(limits.maxWaitMs, req.signal);
  const afterTools = req.messages.at(-1)?.role === 'tool';
  const fail = failNow && script.fail ? script.fail : undefined;
  let emitted = 0;
  const systemWords = words(req.system);
  const inputTokens = systemWords + req.messages.reduce((n, m) => n + messageWords(m), 0);
  if (inputTokens > limits.contextWindow)
    throw new LlmError('bad_request', { vendorCode: 'context_length_exceeded', contextExceeded: true });
  if (script.sleepMs) await pause(script.sleepMs);
  if (fail && fail.after === undefined) throw new LlmError(fail.kind, { retryAfterMs: fail.retryAfterMs, vendorCode: 'llmsim' });
  for (let i = 0; i < (script.think?.count ?? 0); i++) {
    await pause(script.think!.delayMs);
    yield { type: 'thinking_delta', text: (i === 0 ? '' : ' ') + `thought${i + 1}` };
    emitted++;
  }
  for (const token of replyTokens(req, script, afterTools)) {
    if (fail && emitted >= fail.after!) throw new LlmError(fail.kind, { vendorCode: 'llmsim' });
    await pause(script.tokens?.delayMs ?? 0);
    yield { type: 'text_delta', text: token };
    emitted++;
  }
  if (fail) throw new LlmError(fail.kind, { vendorCode: 'llmsim' });
  const calls = afterTools && !script.loop ? [] : script.tools.slice();
  const loopTool = script.loop?.name ?? req.tools[0]?.name;
  if (script.loop && loopTool && !calls.length) calls.push({ name: loopTool, rawArguments: script.loop.rawArguments });
  for (const [i, call] of calls.entries()) yield toolCallEvent(`sim_${req.messages.length}_${i}`, call.name, call.rawArguments);
  yield {
    type: 'usage',
    input_tokens: inputTokens,
    output_tokens: emitted + calls.length,
    cache_read_tokens: req.messages.length > 1 ? systemWords : 0,
  };
  yield { type: 'done', stop_reason: calls.length ? 'tool_use' : 'end_turn' };
}

/**
 * The built-in deterministic provider: driven by `@directives` in the last user message
 * (docs/llmsim.md). `@fail … times=N` counts attempts per provider instance, so a retried
 * call can fail N times and then succeed. Directives are bounded by `limits` (the operator's).
 */
export function createLlmsimProvider(retry: LlmRetryOptions, limits: LlmsimLimits = defaultLlmsimLimits()): LlmProvider {
  const failures = new Map<string, number>();
  return {
    type: 'llmsim',
    stream(req) {
      const { message, repair } = scriptMessage(req.messages);
      const text = userText(message);
      const script = parseLlmsimScript(text, limits);
      // A repair step answers the note: no tools again, and `@json`'s text only when it is `@json-always`.
      if (repair) {
        script.tools = [];
        if (!script.json?.always) delete script.json;
      }
      const key = `${req.messages.length}\u0000${text}`;
      const open = () => {
        if (!script.fail) return simulate(req, script, false, limits);
        const attempts = failures.get(key) ?? 0;
        if (failures.size >= MAX_TRACKED_FAILURES) failures.clear();
        failures.set(key, attempts + 1);
        return simulate(req, script, script.fail.times === undefined || attempts < script.fail.times, limits);
      };
      return streamWithRetries(open, req.signal, retry);
    },
    listModels: async () => [{ id: LLMSIM_MODEL_ID, display_name: 'LLM simulator' }],
  };
}
