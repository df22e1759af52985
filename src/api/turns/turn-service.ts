/**
 * Turns from the API side (spec 3.2, 4.2): submit a message (start a turn), cancel, client
 * tool results and tool approval decisions. Each is its own file; this is what the routes and the scheduler hold.
 */
import { createApprovals } from './approvals.js';
import { createCancelTurn } from './cancel-turn.js';
import { createSubmitMessage } from './submit-message.js';
import { createToolResults } from './tool-results.js';
import { createTurnApiContext, type TurnServiceDeps } from './turn-api-context.js';

export type { Acceptance } from './submit-message.js';
export type { TurnPrincipal, TurnServiceDeps } from './turn-api-context.js';

export function createTurnService(deps: TurnServiceDeps) {
  const ctx = createTurnApiContext(deps);
  return {
    submitMessage: createSubmitMessage(ctx),
    cancel: createCancelTurn(ctx),
    submitToolResults: createToolResults(ctx),
    submitApprovals: createApprovals(ctx),
  };
}

export type TurnService = ReturnType<typeof createTurnService>;
