/**
 * Turns from the API side (spec 3.2, 4.2): submit a message (start a turn), cancel, client
 * tool results, tool approval decisions and a compaction on demand. Each is its own file; this is what the routes and the scheduler hold.
 */
import { createApprovals } from './approvals.js';
import { createCancelTurn } from './cancel-turn.js';
import { createCompactSession } from './compact-session.js';
import { createQueueMessage } from './queue-message.js';
import { createSubmitMessage } from './submit-message.js';
import { createToolResults } from './tool-results.js';
import { createTurnApiContext, type TurnServiceDeps } from './turn-api-context.js';

export type { Acceptance } from './submit-message.js';
export type { QueuedMessageView, SendOutcome, SentMessage } from './queue-message.js';
export type { TurnPrincipal, TurnServiceDeps } from './turn-api-context.js';

export function createTurnService(deps: TurnServiceDeps) {
  const ctx = createTurnApiContext(deps);
  const submitMessage = createSubmitMessage(ctx);
  const cancel = createCancelTurn(ctx);
  const queued = createQueueMessage(ctx, submitMessage, cancel);
  return {
    submitMessage,
    sendMessage: queued.send,
    queued,
    cancel,
    compact: createCompactSession(ctx),
    submitToolResults: createToolResults(ctx),
    submitApprovals: createApprovals(ctx),
  };
}

export type TurnService = ReturnType<typeof createTurnService>;
