// The turn's contract, shared by its API half (src/api/turns/) and the session actor (actors/):
// its events, its job, the session row's transitions and the pure decider. Other folders import from here only.
export type { ImageSource } from './image-source.js';
export { createSessionStatus } from './session-status.js';
export type { SessionStatusStore, SessionTurnRow, TurnSessionStatus } from './session-status.js';
export { compactJob, startJob, resumeJob, parseTurnJob } from './turn-job.js';
export { compactionPreamble, mintCompactionTurn } from './compaction-start.js';
export type { TurnJobData } from './turn-job.js';
export { decideTurnStep } from './turn-decider.js';
export type { DecideInput, TurnDecision } from './turn-decider.js';
export { evolveTurn, foldTurn, initialTurnState, outstandingOf } from './turn-state.js';
export type { ApprovalDecision, StepState, TurnState } from './turn-state.js';
export { checkApprovalRules, compileApprovalPolicy } from './tool-approval-policy.js';
export { checkCompactionSettings, effectiveCompaction } from './compaction-settings.js';
export type { CompactionSettingsBounds, EffectiveCompaction } from './compaction-settings.js';
export type { ApprovalPolicyOf } from './approval-step.js';
export { cancelEvents, stepClosingEvents } from './turn-event-groups.js';
export {
  addUsage,
  CANCEL_INPUT_TEXT,
  CLIENT_TOOL_SOURCE,
  CANCELLED_OUTPUT_TEXT,
  CANCELLED_TOOL_ERROR,
  DENIED_TOOL_ERROR,
  POLICY_DENIED_TOOL_ERROR,
  INTERRUPTED_TOOL_ERROR,
  textPart,
  toolTags,
  turnEvents,
  ZERO_USAGE,
} from './turn-events.js';
export type {
  GenerationFacts,
  MessagePart,
  ModelRef,
  StoredMessage,
  StructuredReply,
  ToolCallRef,
  ToolSource,
  TurnErrorCode,
  TurnRef,
  Usage,
} from './turn-events.js';
export { MAX_STRUCTURED_REPAIRS, responseFormatOf } from './structured-output.js';
export { asTerminal, TerminalTurnError, RetryableTurnError, StaleDecisionError, TurnCancelled, TurnStoppedError } from './turn-errors.js';
export { createMessageQueue } from './message-queue.js';
export type { MessageQueue, NewQueued, OnBusy, QueuedRow, QueuedState } from './message-queue.js';
export { createQueueDispatcher } from './queue-dispatch.js';
export type { DispatchOutcome, QueueDispatcher } from './queue-dispatch.js';
export { mintAccepted, startPreamble, turnRefOf } from './turn-start.js';
export type { AcceptedMessage, MessageInput } from './turn-start.js';
