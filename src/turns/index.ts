// Public names of the turn (its API half and its engine). Other folders import from here only.
export { createTurnRunner, defaultTurnRunnerOptions } from './turn-runner.js';
export type { TurnRunner, TurnRunnerDeps, TurnRunnerOptions } from './turn-runner.js';
export { createTurnWorker } from './turn-worker.js';
export type { TurnWorker, TurnWorkerDeps, TurnWorkerOptions } from './turn-worker.js';
export { pickModelId, DEFAULT_MAX_OUTPUT_TOKENS } from './model-resolver.js';
export type { ModelResolver, ResolvedModel } from './model-resolver.js';
export { unavailableToolStorage, toolContextFor, STORAGE_UNAVAILABLE_MESSAGE } from './tool-context.js';
export type { SessionToolStorage, ToolContextFactory, ToolSessionRef } from './tool-context.js';
export type { ImageSource } from './image-source.js';
export { createSessionStatus } from './session-status.js';
export type { SessionStatusStore, SessionTurnRow, TurnSessionStatus } from './session-status.js';
export { startJob, resumeJob, parseTurnJob } from './turn-job.js';
export type { TurnJobData } from './turn-job.js';
export { decideTurnStep, evolveTurn, foldTurn, initialTurnState } from './turn-decider.js';
export type { DecideInput, StepState, TurnDecision, TurnState } from './turn-decider.js';
export {
  addUsage,
  CANCEL_INPUT_TEXT,
  CLIENT_TOOL_SOURCE,
  CANCELLED_OUTPUT_TEXT,
  CANCELLED_TOOL_ERROR,
  INTERRUPTED_TOOL_ERROR,
  textPart,
  toolTags,
  turnEvents,
  ZERO_USAGE,
} from './turn-events.js';
export type { MessagePart, ModelRef, StoredMessage, ToolCallRef, ToolSource, TurnErrorCode, TurnRef, Usage } from './turn-events.js';
export { TerminalTurnError, RetryableTurnError, TurnStoppedError } from './turn-errors.js';
export { createTurnModule } from './turn-module.js';
export type { TurnModule, TurnModuleDeps, TurnPorts } from './turn-module.js';
export type { TurnService } from './turn-service.js';
