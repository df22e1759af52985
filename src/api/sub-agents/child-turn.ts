/**
 * Waits for one turn of a child session to end, reading the child's log live (the same
 * subscription SSE uses, so it holds no event loop and no database connection while it waits):
 * the turn's final text, how it ended, and the tokens it used.
 */
import type { EventReader, EventSubscription } from '../../bus/index.js';
import type { SessionEvent } from '../../../schemas/events.js';
import { addUsage, ZERO_USAGE, type Usage } from '../../turns/index.js';

export type ChildTurnEnd =
  | { status: 'completed'; text: string; usage: Usage }
  | { status: 'failed' | 'cancelled'; error: string; usage: Usage }
  | { status: 'waiting_for_tool_results'; usage: Usage };

/** Only with `endOnApproval`: a tool call waits for a person (decision 0101). */
export type ApprovalWait = { status: 'waiting_for_approval'; tools: string[]; usage: Usage };

/** Only with `endOnApproval`: `onEvent` sees each event of the turn as it is read (an MCP caller's progress). */
export interface EndOnApprovalOptions {
  endOnApproval: true;
  onEvent?: (e: SessionEvent) => void;
}

/**
 * Ends when the turn does; rejects with `signal.reason` when the signal fires first.
 * `endOnApproval`: also when a call waits for a person (a sub-agent's parent waits for that
 * person; a caller over MCP, which cannot decide in the middle of a call, does not).
 * A turn that completed, failed or was cancelled is answered once the session has idled after it
 * (its `session.idled`): the caller's next message to the session is then not refused as busy.
 */
export async function waitForChildTurn(
  events: EventReader<SessionEvent>,
  sessionId: string,
  turnId: string,
  signal: AbortSignal,
): Promise<ChildTurnEnd>;
export async function waitForChildTurn(
  events: EventReader<SessionEvent>,
  sessionId: string,
  turnId: string,
  signal: AbortSignal,
  options: EndOnApprovalOptions,
): Promise<ChildTurnEnd | ApprovalWait>;
export async function waitForChildTurn(
  events: EventReader<SessionEvent>,
  sessionId: string,
  turnId: string,
  signal: AbortSignal,
  { endOnApproval = false, onEvent }: { endOnApproval?: boolean; onEvent?: EndOnApprovalOptions['onEvent'] } = {},
): Promise<ChildTurnEnd | ApprovalWait> {
  signal.throwIfAborted();
  const sub: EventSubscription<SessionEvent> = events.subscribe(sessionId, { afterSequence: 0 });
  const onAbort = () => sub.close();
  signal.addEventListener('abort', onAbort, { once: true });
  const fold = { text: '', usage: ZERO_USAGE };
  let ended: ChildTurnEnd | null = null;
  try {
    for await (const e of sub) {
      if (e.context?.turn_id !== turnId) continue;
      if (ended) {
        if (e.type === 'session.idled') return ended;
        continue;
      }
      onEvent?.(e);
      if (endOnApproval && e.type === 'tool.approval_requested')
        return { status: 'waiting_for_approval', tools: e.data.tool_calls.map((c) => c.name), usage: fold.usage };
      const end = step(fold, e);
      if (end?.status === 'waiting_for_tool_results') return end;
      ended = end;
    }
    // The turn's end is known; only the idling was not seen before the signal fired.
    if (ended) return ended;
    signal.throwIfAborted();
    throw new Error(`the event subscription of session ${sessionId} ended before its turn did`);
  } finally {
    signal.removeEventListener('abort', onAbort);
    sub.close();
  }
}

/** Folds one event of the turn; the end when it is one. */
function step(fold: { text: string; usage: Usage }, e: SessionEvent): ChildTurnEnd | null {
  switch (e.type) {
    case 'output.message.completed':
      if (!e.metadata?.['cancellation']) fold.text = textOf(e.data.message.content);
      return null;
    case 'llm.generation':
      fold.usage = addUsage(fold.usage, e.data.usage);
      return null;
    case 'tool.completed':
      if (e.data.usage) fold.usage = addUsage(fold.usage, e.data.usage);
      return null;
    case 'turn.completed':
      return { status: 'completed', text: fold.text, usage: e.data.usage };
    case 'turn.failed':
      return { status: 'failed', error: e.data.error, usage: fold.usage };
    case 'turn.cancelled':
      return { status: 'cancelled', error: 'its turn was cancelled', usage: e.data.usage };
    case 'tool.call_requested':
      return { status: 'waiting_for_tool_results', usage: fold.usage };
    default:
      return null;
  }
}

function textOf(content: readonly { type: string; [k: string]: unknown }[]): string {
  return content
    .filter((p) => p.type === 'text' && typeof p['text'] === 'string')
    .map((p) => p['text'] as string)
    .join('');
}
