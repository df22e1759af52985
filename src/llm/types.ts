/**
 * The provider interface the turn engine consumes. One `LlmProvider` per configured LLM
 * provider; every vendor adapter (and the built-in `llmsim`) maps this neutral shape to its
 * wire protocol and back. Nothing vendor-specific leaks through these types except the
 * opaque `provider_state` string, which callers store and hand back unchanged.
 */

/** The provider_type tokens of the API (spec 2.6) plus the built-in simulator. */
export const LLM_PROVIDER_TYPES = ['openai', 'openai_completions', 'anthropic', 'gemini', 'llmsim'] as const;
export type LlmProviderType = (typeof LLM_PROVIDER_TYPES)[number];

export type LlmTextPart = { type: 'text'; text: string };
/** An inline image; the turn engine resolves `image_file` ids to bytes before calling. */
export type LlmImagePart = { type: 'image'; media_type: string; data_base64: string };
export type LlmUserPart = LlmTextPart | LlmImagePart;

/** A complete tool call requested by the model; `arguments` is the parsed JSON object. */
export interface LlmToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface LlmUserMessage {
  role: 'user';
  content: LlmUserPart[];
}

export interface LlmAssistantMessage {
  role: 'assistant';
  /** The visible text of the step; may be '' when the step only called tools. */
  content: string;
  tool_calls?: LlmToolCall[];
  /** Thinking text of the step (informational; vendors get it back only via provider_state). */
  thinking?: string;
  /**
   * Opaque vendor continuation data from the step's `done` event (thinking signatures of
   * Anthropic and Gemini). Store it with the message and pass it back unchanged; an adapter
   * ignores state produced by another provider type.
   */
  provider_state?: string;
}

export interface LlmToolMessage {
  role: 'tool';
  tool_call_id: string;
  /** Tool name of the call this result answers (Gemini matches results by name). */
  name: string;
  content: string;
  is_error?: boolean;
}

export type LlmMessage = LlmUserMessage | LlmAssistantMessage | LlmToolMessage;

export interface LlmToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments (`type: 'object'`). */
  parameters: Record<string, unknown>;
}

export type LlmReasoningEffort = 'low' | 'medium' | 'high';

/**
 * A structured reply (OpenAI's `response_format` shape): the final reply is JSON, matching
 * `schema` for `json_schema`, any JSON object for `json_object`. Adapters use the vendor's
 * native structured output (docs/decisions/0098-structured-replies.md).
 */
export type LlmResponseFormat =
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean }
  | { type: 'json_object' };

export interface LlmControls {
  max_tokens?: number;
  temperature?: number;
  /** Enables extended thinking: OpenAI `reasoning.effort`, Anthropic thinking budget, Gemini thinkingConfig. */
  reasoning_effort?: LlmReasoningEffort;
  response_format?: LlmResponseFormat;
}

export interface LlmRequest {
  /** The vendor's model id (e.g. `gpt-5`, `claude-sonnet-4-5`, `gemini-2.5-flash`). */
  model: string;
  system: string;
  messages: LlmMessage[];
  tools: LlmToolDefinition[];
  controls: LlmControls;
  /**
   * Groups requests that share a prefix in the vendor's prompt cache: OpenAI `prompt_cache_key`
   * (Responses; Chat Completions on OpenAI's own endpoint only, as compatible servers may refuse
   * unknown fields). The turn sends the session id. Anthropic marks its prefix with `cache_control`.
   */
  cache_key?: string;
  /** Aborting stops the stream; the iterator then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface LlmUsage {
  /** All prompt tokens of the call, including those served from or written to a cache. */
  input_tokens: number;
  /** Generated tokens, including thinking tokens where the vendor reports them. */
  output_tokens: number;
  /** The part of `input_tokens` read from the vendor's prompt cache. */
  cache_read_tokens: number;
}

/** `tool_use` whenever the step emitted tool calls, whatever the vendor reported. */
export type LlmStopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'content_filter' | 'other';

/**
 * One stream, in order: any number of `text_delta`, `thinking_delta` and `tool_call`
 * events, then exactly one `usage`, then exactly one `done`, then the iterator ends.
 * A failure rejects the iterator with an `LlmError` (or the abort reason after abort).
 */
export type LlmStreamEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; text: string }
  | {
      type: 'tool_call';
      id: string;
      name: string;
      arguments: Record<string, unknown>;
      /** Set (with `arguments` = {}) when the model's argument text was not a JSON object. */
      invalid_arguments?: string;
    }
  | ({ type: 'usage' } & LlmUsage)
  | { type: 'done'; stop_reason: LlmStopReason; provider_state?: string };

export interface LlmModelInfo {
  id: string;
  display_name: string;
  /** Input tokens the vendor lists for the model (Gemini `inputTokenLimit`, Anthropic `max_input_tokens`). */
  context_window?: number;
  /** Output tokens the vendor lists (Gemini `outputTokenLimit`, Anthropic `max_tokens`). */
  max_output_tokens?: number;
}

export interface LlmProvider {
  readonly type: LlmProviderType;
  /** Streams one model call (one reason step). Retries happen inside, before the first event. */
  stream(req: LlmRequest): AsyncIterable<LlmStreamEvent>;
  /** Lists the chat-capable models of the account; absent when the vendor has no listing. */
  listModels?(): Promise<LlmModelInfo[]>;
}

/** The stored provider record's connection fields (spec 2.6), the key already decrypted. */
export interface LlmProviderConfig {
  provider_type: LlmProviderType;
  api_key: string;
  /** The SDK base URL (OpenAI-style URLs include `/v1`); null or absent = vendor default. */
  base_url?: string | null;
}

/** Hooks of the metrics module (src/observability/llm-metrics.ts) into every provider built. */
export interface LlmObserver {
  /** Returns the provider to use in place of `provider` (the same interface, measured). */
  wrap(provider: LlmProvider): LlmProvider;
  /** A call to a provider of this type is being retried (after a 429, 5xx or network error). */
  retried(type: LlmProviderType): void;
}
