import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

export type Agent = Schemas['Agent'];
export type AgentCreate = Schemas['AgentCreate'];
export type AgentPatch = Schemas['AgentPatch'];
export type Session = Schemas['Session'];
export type SessionCreate = Schemas['CreateSessionBody'];
export type SessionPatch = Schemas['UpdateSessionBody'];
export type StoredEvent = Schemas['Event'];
export type User = Schemas['User'];
export type UserCreate = Schemas['UserCreate'];
export type ApiKeyInfo = Schemas['ApiKeyInfo'];
export type ApiKeyCreate = Schemas['ApiKeyCreate'];
export type ApiKeyCreated = Schemas['ApiKeyCreated'];
export type MessageControls = Schemas['MessageControls'];
export type InputPart = Schemas['TextInputPart'] | Schemas['ImageFileInputPart'];
export type ClientToolResult = Schemas['ClientToolResult'];
/** One decision of POST /v1/sessions/{id}/approvals (tool approval, decision 0101). */
export type ToolApprovalDecision = Schemas['ToolApprovalDecision'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointCreate = Schemas['WebhookEndpointCreate'];
export type WebhookEndpointPatch = Schemas['WebhookEndpointPatch'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

export interface SendMessageOptions {
  controls?: MessageControls;
  tags?: string[];
  metadata?: Record<string, unknown>;
  /**
   * While a turn runs: `reject` (default, 409), `enqueue` (the message waits and runs after the
   * turns before it; the answer is a `QueuedMessage`) or `interrupt` (the running turn is cancelled first).
   */
  onBusy?: 'reject' | 'enqueue' | 'interrupt';
}

/** A message sent with `onBusy` while a turn ran, waiting for its own. */
export type QueuedMessage = Schemas['QueuedMessage'];
export type CompactionAccepted = Schemas['CompactionAccepted'];
export type CompactionSettings = Schemas['CompactionSettings'];
