export { createAgentSessionClient } from './client.js';
export type { AgentSessionClient, ClientOptions } from './client.js';
export { SessionEventStream, DEFAULT_READ_TIMEOUT_MS } from './stream.js';
export type { StreamOptions, StreamTransport, ReconnectInfo, ReconnectReason } from './stream.js';
export { sendAndWait, serveClientTools, runTools } from './turns.js';
export type { ClientToolHandler, ClientToolHandlers, TurnClient, TurnOptions, TurnResult, TurnStatus } from './turns.js';
export { isEvent, messageText } from './events.js';
export type {
  ContentPart,
  EventContext,
  EventDataMap,
  EventType,
  Message,
  SessionEvent,
  SessionEventOf,
  ToolCall,
  Usage,
} from './events.js';
export { ApiError, ConnectionError, StreamStateError, TurnTimeoutError } from './errors.js';
export { DEFAULT_BACKOFF, backoffDelay } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
export type {
  Agent,
  AgentCreate,
  AgentPatch,
  ApiKeyCreate,
  ApiKeyCreated,
  ApiKeyInfo,
  ClientToolResult,
  ToolApprovalDecision,
  InputPart,
  MessageControls,
  SendMessageOptions,
  QueuedMessage,
  CompactionAccepted,
  CompactionSettings,
  Session,
  SessionCreate,
  SessionPatch,
  StoredEvent,
  User,
  UserCreate,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointPatch,
} from './types.js';
export type { paths, components, operations } from './generated/openapi.js';
