import { sleep } from './backoff.js';
import { ApiError, TurnTimeoutError } from './errors.js';
import { messageText, type EventDataMap, type Message, type SessionEvent, type ToolCall } from './events.js';
import type { SessionEventStream, StreamOptions } from './stream.js';
import type { ClientToolResult, InputPart, QueuedMessage, SendMessageOptions, ToolApprovalDecision } from './types.js';

/** Runs one client tool call; the return value is the result (errors thrown become `error` results). */
export type ClientToolHandler = (args: Record<string, unknown>, call: ToolCall) => unknown;
/** Handlers by tool name, or one function for every call (`(call) => result`). */
export type ClientToolHandlers = Record<string, ClientToolHandler> | ((call: ToolCall) => unknown);

function handlerOf(tools: ClientToolHandlers | undefined, name: string): ((call: ToolCall) => unknown) | undefined {
  if (!tools) return undefined;
  if (typeof tools === 'function') return tools;
  const handler = Object.hasOwn(tools, name) ? tools[name] : undefined;
  return handler ? (call) => handler(call.arguments ?? {}, call) : undefined;
}

/**
 * Decides one tool call that waits for a person: true approves, false denies, a string denies
 * with that reason (the LLM sees it as the tool's error result).
 */
export type ApprovalHandler = (call: ToolCall) => boolean | string | Promise<boolean | string>;

/** The part of the client the flows use. */
export interface TurnClient {
  sessions: {
    lastEventId(sessionId: string): Promise<string | undefined>;
    sendMessage(sessionId: string, input: string | InputPart[], opts?: SendMessageOptions): Promise<Message | QueuedMessage>;
    stream(sessionId: string, opts?: StreamOptions): SessionEventStream;
    submitToolResults(sessionId: string, results: ClientToolResult[]): Promise<unknown>;
    submitApprovals(sessionId: string, approvals: ToolApprovalDecision[]): Promise<unknown>;
  };
}

export interface TurnOptions extends SendMessageOptions {
  /** Client tool handlers by tool name: `tool.call_requested` is answered with their results. */
  tools?: ClientToolHandlers;
  /**
   * Decides tool calls that wait for approval (`tool.approval_requested`); without it the result
   * is `waiting_for_approval` with the calls in `pendingApprovals`.
   */
  approve?: ApprovalHandler;
  /** Sees every event of the turn as it arrives (deltas included). */
  onEvent?(event: SessionEvent): void;
  /** Stops waiting (the turn itself goes on; cancel it with `sessions.cancel`). */
  signal?: AbortSignal;
  /** Gives up waiting after this many ms with `TurnTimeoutError` (default: no limit). */
  timeoutMs?: number;
  /** Options of the underlying stream (auth mode, backoff, read timeout). */
  stream?: Omit<StreamOptions, 'since' | 'signal'>;
}

export type TurnStatus = 'completed' | 'failed' | 'cancelled' | 'waiting_for_tool_results' | 'waiting_for_approval';

export interface TurnResult {
  /** The stored user message that started the turn. */
  message: Message;
  turnId: string | undefined;
  status: TurnStatus;
  /** The text of the turn's last agent message (`output.message.completed`). */
  reply: string;
  /** Thinking text of the turn, when the model streamed any. */
  thinking: string;
  /** Every event of the turn, in order. */
  events: SessionEvent[];
  /** For `failed`: the error and its code. */
  error?: { message: string; code: string };
  /** For `waiting_for_tool_results` (no handler given): the calls the turn waits for. */
  pendingToolCalls?: ToolCall[];
  /** For `waiting_for_approval` (no `approve` given): the calls that wait for a person. */
  pendingApprovals?: ToolCall[];
}

/**
 * Sends a message and follows its turn to the end: the stream starts after the session's newest
 * event, so nothing of the turn is missed and nothing older is replayed; events of other turns
 * are skipped. Client tool calls are answered from `opts.tools`; without a handler for one the
 * result is `waiting_for_tool_results` with the pending calls.
 */
export async function sendAndWait(
  client: TurnClient,
  sessionId: string,
  input: string | InputPart[],
  opts: TurnOptions = {},
): Promise<TurnResult> {
  const timeout = opts.timeoutMs === undefined ? undefined : AbortSignal.timeout(opts.timeoutMs);
  const signal = anySignal([opts.signal, timeout]);
  const since = await client.sessions.lastEventId(sessionId);
  const sent = await client.sessions.sendMessage(sessionId, input, opts);
  // A queued message (onBusy) gets its turn later: its input.dequeued names the turn, and its input.message follows.
  const queuedId = 'object' in sent && sent.object === 'queued_message' ? sent.id : undefined;
  let messageId = queuedId ? undefined : (sent as Message).id;
  const result: TurnResult = { message: sent as Message, turnId: undefined, status: 'completed', reply: '', thinking: '', events: [] };
  const stream = client.sessions.stream(sessionId, { ...opts.stream, since, signal });
  for await (const event of stream) {
    if (queuedId && event.type === 'input.dequeued' && event.data.queued_id === queuedId) {
      if (event.data.reason === 'cancelled') return { ...result, status: 'cancelled' };
      messageId = event.context.input_message_id;
    }
    if (!messageId || event.context.input_message_id !== messageId) continue;
    if (event.type === 'input.message' && event.data.message.id === messageId) result.message = event.data.message as Message;
    result.events.push(event);
    opts.onEvent?.(event);
    if (await apply(client, sessionId, result, event, opts)) return result;
  }
  if (timeout?.aborted) throw new TurnTimeoutError(opts.timeoutMs!);
  throw signal?.reason ?? new Error('the event stream ended before the turn');
}

/** Folds one event into the result; true when the turn is over (or waits for the caller). */
async function apply(
  client: TurnClient,
  sessionId: string,
  result: TurnResult,
  event: SessionEvent,
  { tools, approve }: Pick<TurnOptions, 'tools' | 'approve'>,
): Promise<boolean> {
  switch (event.type) {
    case 'turn.started':
      result.turnId = event.data.turn_id;
      return false;
    case 'output.message.completed':
      result.reply = messageText(event.data.message);
      return false;
    case 'reason.thinking.completed':
      result.thinking += event.data.thinking;
      return false;
    case 'turn.failed':
      result.status = 'failed';
      result.error = { message: event.data.error, code: event.data.error_code };
      return false;
    case 'turn.cancelled':
      result.status = 'cancelled';
      return false;
    case 'tool.call_requested': {
      const unhandled = event.data.tool_calls.filter((c) => !handlerOf(tools, c.name));
      if (!tools || unhandled.length === event.data.tool_calls.length) {
        result.status = 'waiting_for_tool_results';
        result.pendingToolCalls = event.data.tool_calls;
        return true;
      }
      const results = await runTools(event.data, tools);
      await whenWaiting(() => client.sessions.submitToolResults(sessionId, results));
      return false;
    }
    case 'tool.approval_requested': {
      if (!approve) {
        result.status = 'waiting_for_approval';
        result.pendingApprovals = event.data.tool_calls;
        return true;
      }
      const decisions = await Promise.all(event.data.tool_calls.map(async (call) => decision(call, await approve(call))));
      await whenWaiting(() => client.sessions.submitApprovals(sessionId, decisions));
      return false;
    }
    case 'session.idled':
      return true;
    default:
      return false;
  }
}

/** Runs the handlers of one `tool.call_requested`; a missing handler or a throw becomes an `error` result. */
export async function runTools(data: EventDataMap['tool.call_requested'], tools: ClientToolHandlers): Promise<ClientToolResult[]> {
  return Promise.all(
    data.tool_calls.map(async (call): Promise<ClientToolResult> => {
      const handler = handlerOf(tools, call.name);
      if (!handler) return { tool_call_id: call.id, error: `no client handler for tool ${call.name}` };
      try {
        return { tool_call_id: call.id, result: await handler(call) };
      } catch (err) {
        return { tool_call_id: call.id, error: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
}

/**
 * The client tool loop for sessions whose messages are sent elsewhere (a UI, the scheduler):
 * follows the session from its newest event (or `since`) and answers every `tool.call_requested`
 * until `signal` aborts. Resolves with the number of calls answered.
 */
export async function serveClientTools(
  client: TurnClient,
  sessionId: string,
  tools: ClientToolHandlers,
  opts: { signal?: AbortSignal; since?: string } = {},
): Promise<number> {
  const since = opts.since ?? (await client.sessions.lastEventId(sessionId));
  let answered = 0;
  for await (const event of client.sessions.stream(sessionId, { since, signal: opts.signal, types: ['tool.call_requested'] })) {
    if (event.type !== 'tool.call_requested') continue;
    const results = await runTools(event.data, tools);
    await whenWaiting(() => client.sessions.submitToolResults(sessionId, results));
    answered += results.length;
  }
  return answered;
}

/** How long a tool result may wait for the session to reach `waiting_for_tool_results`, in ms. */
const WAITING_STATE_TIMEOUT_MS = 10_000;

function decision(call: ToolCall, answer: boolean | string): ToolApprovalDecision {
  if (answer === true) return { tool_call_id: call.id, approved: true };
  return typeof answer === 'string'
    ? { tool_call_id: call.id, approved: false, reason: answer }
    : { tool_call_id: call.id, approved: false };
}

/**
 * Posts tool results or approval decisions. The `tool.call_requested` / `tool.approval_requested`
 * event can reach the client a moment before the session's status says
 * `waiting_for_tool_results`; the 409 of that moment is retried briefly.
 */
async function whenWaiting(post: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + WAITING_STATE_TIMEOUT_MS;
  for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
    try {
      await post();
      return;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409 || Date.now() + delay > deadline) throw err;
      await sleep(delay);
    }
  }
}

function anySignal(signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => !!s);
  return present.length > 1 ? AbortSignal.any(present) : present[0];
}
