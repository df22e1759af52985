/**
 * The capability model. A capability is a module of tools plus instructions; agents,
 * harnesses and sessions reference capabilities by id (spec 2.1, 2.3, 3.4).
 *
 * Error contract for `ToolDefinition.execute`:
 * - `ToolError`: an expected failure (bad arguments, file not found, blocked URL). Its
 *   message is written for the LLM and is safe to show it; the turn engine reports it as the
 *   tool result with status `error`.
 * - an abort (the `ToolContext.signal` fired): the turn was cancelled; rethrown as is.
 * - anything else: a bug or an infrastructure failure. The turn engine logs it and shows the
 *   LLM a generic message only.
 */
import type { SessionFs, SessionKv, SessionSchedules, SessionSecrets, SessionSql } from './storage-ports.js';

/** UI feature strings a capability contributes to a session's `features` (spec 2.3). */
export const FEATURES = ['file_system', 'secrets', 'key_value', 'schedules', 'sql_database'] as const;
export type Feature = (typeof FEATURES)[number];

/** A JSON Schema object (plain data; TypeBox schemas qualify). */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** A capability's configuration as stored on a harness, agent or session item. */
export type CapabilityConfig = Readonly<Record<string, unknown>>;

/** One part of a tool result. JSON results are serialised into a `text` part. */
export interface TextPart {
  type: 'text';
  text: string;
}
export type ContentPart = TextPart;

export interface ToolResult {
  content: ContentPart[];
  /** A tool that ran a turn of its own (a sub-agent): recorded on `tool.completed`, its usage counted in the turn's. */
  nested?: NestedTurnInfo;
}

/** The child session a tool ran a turn in, and that turn's token usage. */
export interface NestedTurnInfo {
  child_session_id: string;
  usage: { input_tokens: number; output_tokens: number; cache_read_tokens: number };
}

/** What a sub-agent tool records on its session's log once the child's turn is queued (`subagent.started`). */
export interface SubagentStart {
  agent_id: string;
  child_session_id: string;
  child_turn_id: string;
}

/** What the turn engine hands every tool call. One per call; never shared across sessions. */
export interface ToolContext {
  session_id: string;
  org_id: string;
  /** The calling capability's resolved config (harness → agent → session merge). */
  config: CapabilityConfig;
  /** Fires when the turn is cancelled; tools pass it to any I/O they start. */
  signal: AbortSignal;
  /** The clock; tools never read `Date.now()` themselves. */
  now(): Date;
  fs: SessionFs;
  kv: SessionKv;
  secrets: SessionSecrets;
  sql: SessionSql;
  schedules: SessionSchedules;
  /** The call being run and its turn (sub-agents link a child session to them); absent outside a turn. */
  call?: { id: string; turn_id: string };
  /** Records `subagent.started` on this session's log (stored before it resolves); absent outside a turn. */
  reportSubagent?(start: SubagentStart): Promise<void>;
}

/** A server-side tool as offered to the LLM. `parameters` is a JSON Schema with `type: object`. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
  /** Human-readable name for UIs, e.g. "Get Current Time" for `get_current_time`. */
  display_name: string;
  /** This tool's own deadline, in ms, instead of the operator's TOOL_TIMEOUT_MS (a sub-agent's turn). */
  timeoutMs?: number;
  /** Validates `args` against `parameters`, then runs the tool. See the error contract above. */
  execute(args: unknown, ctx: ToolContext): Promise<ToolResult>;
}

export interface Capability {
  id: string;
  /** Display name. */
  name: string;
  description: string;
  /** Instructions prepended to the agent's system prompt while the capability is active. */
  prompt: string;
  tools: ToolDefinition[];
  /** JSON Schema (compiled by ajv, strict) for the capability's config; every key optional. */
  configSchema: JsonSchema;
  features: Feature[];
  /** Ids of capabilities that are added automatically whenever this one is active. */
  dependencies: string[];
  /** Tool name → display name. */
  displayNames: Readonly<Record<string, string>>;
  /**
   * Tools known only at run time (MCP servers): listed when a turn starts, from the resolved
   * config. Never throws for an unreachable source: `prompt` tells the LLM what is missing.
   */
  dynamicTools?(config: CapabilityConfig, ctx: DynamicToolsContext): Promise<DynamicTools>;
  /** Checks beyond the JSON Schema (e.g. URL address policy), run on write; readable messages or null. */
  checkConfig?(config: CapabilityConfig): string[] | null;
}

/** What listing run-time tools may use: the session's identity and secrets (header values by reference). */
export type DynamicToolsContext = Pick<ToolContext, 'session_id' | 'org_id' | 'secrets'>;

export interface DynamicTools {
  tools: ToolDefinition[];
  /** Appended to the capability's instructions for this turn (e.g. a server that could not be reached). */
  prompt: string;
}

/** A capability item on a harness, agent or session: an id, or `{ref, config?}`. */
export type CapabilityRef = string | { ref: string; config?: CapabilityConfig | null };

/** A normalised capability item. */
export interface ResolvedCapabilityRef {
  ref: string;
  config: CapabilityConfig;
}

/** A tool of an active capability, bound to that capability's resolved config. */
export interface ResolvedTool extends ToolDefinition {
  capability_id: string;
  config: CapabilityConfig;
}

/** The outcome of capability resolution for one session turn. */
export interface ResolvedCapabilities {
  capabilities: ResolvedCapabilityRef[];
  features: Feature[];
  tools: ResolvedTool[];
  /** The capabilities' instructions, joined; empty when none contribute any. */
  prompt: string;
  /** Refs the registry does not know; left out of everything above. */
  unknown: string[];
}

/** An expected tool failure whose message is written for, and safe to show, the LLM. */
export class ToolError extends Error {
  /** A sub-agent whose child turn failed still reports the child and the tokens it used. */
  readonly nested: NestedTurnInfo | undefined;
  constructor(message: string, options?: ErrorOptions & { nested?: NestedTurnInfo }) {
    super(message, options);
    this.name = 'ToolError';
    this.nested = options?.nested;
  }
}
