export { LLM_PROVIDER_TYPES } from './types.js';
export type {
  LlmAssistantMessage,
  LlmControls,
  LlmImagePart,
  LlmMessage,
  LlmObserver,
  LlmModelInfo,
  LlmProvider,
  LlmProviderConfig,
  LlmProviderType,
  LlmReasoningEffort,
  LlmResponseFormat,
  LlmRequest,
  LlmStopReason,
  LlmStreamEvent,
  LlmTextPart,
  LlmToolCall,
  LlmToolDefinition,
  LlmToolMessage,
  LlmUsage,
  LlmUserMessage,
  LlmUserPart,
} from './types.js';
export { LlmError } from './errors.js';
export type { LlmErrorKind, LlmErrorDetails } from './errors.js';
export { createLlmProvider } from './create-llm-provider.js';
export type { LlmProviderOptions } from './create-llm-provider.js';
export {
  DEFAULT_LLM_MAX_RETRIES,
  DEFAULT_LLM_RETRY_BASE_DELAY_MS,
  DEFAULT_LLM_RETRY_MAX_DELAY_MS,
  DEFAULT_LLM_MAX_RETRY_AFTER_MS,
} from './retry.js';
export { LLMSIM_MODEL_ID, LLMSIM_MODEL_UUID } from './llmsim.js';
export { defaultLlmsimLimits, type LlmsimLimits } from './llmsim-directives.js';
export { createDeltaBatcher, DEFAULT_DELTA_BATCH_INTERVAL_MS } from './delta-batcher.js';
export type { DeltaBatch, DeltaBatcher, DeltaBatcherOptions } from './delta-batcher.js';
export { pickModelId, DEFAULT_MAX_OUTPUT_TOKENS } from './model-resolver.js';
export { effectiveLimits, familyLimits, type ModelLimits } from './model-limits.js';
export type { ModelResolver, ResolvedModel } from './model-resolver.js';
export { REPLY_TOOL_NAME, STRUCTURED_REPAIR_PREFIX, repairNoteText } from './structured-output.js';
export { deriveMessages, perMessageList } from './per-message.js';
