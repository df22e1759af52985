import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from './event-types.js';
import { ListOf, PageOf, ref, Timestamp, Uuid } from './common.js';
import { Event, eventSchemas } from './event-documents.js';
import { EventContext } from './events.js';
import { MAX_INITIAL_FILES } from './fs.js';
import { MAX_TOOL_APPROVAL_RULES, ToolApprovalRule, ToolApprovals } from './approvals.js';
import { CompactionSettings } from './compaction.js';

const Tag = Type.String({ minLength: 1, maxLength: 256 });

/** The rules' list (as `ToolApprovals`) described for where it appears. */
const approvalRules = (description: string) => Type.Array(ref(ToolApprovalRule), { maxItems: MAX_TOOL_APPROVAL_RULES, description });

export const SessionStatus = Type.Union(
  ['started', 'active', 'idle', 'waiting_for_tool_results'].map((s) => Type.Literal(s)),
  { $id: 'SessionStatus' },
);

export const Session = Type.Object(
  {
    id: Uuid,
    organization_id: Uuid,
    harness_id: Uuid,
    agent_id: Type.Union([Uuid, Type.Null()]),
    title: Type.Union([Type.String(), Type.Null()]),
    tags: Type.Array(Type.String()),
    model_id: Type.Union([Uuid, Type.Null()]),
    capabilities: Type.Array(Type.Ref('CapabilityRef')),
    status: Type.Ref('SessionStatus'),
    features: Type.Array(Type.String()),
    parent_session_id: Type.Union([Uuid, Type.Null()], {
      description: 'Sub-agents: the session whose tool call created this one (null for a session created through the API).',
    }),
    parent_tool_call_id: Type.Union([Type.String(), Type.Null()], {
      description: "Sub-agents: the id of that tool call in the parent's log (its tool.started / tool.completed events).",
    }),
    queued_messages: Type.Integer({
      minimum: 0,
      description: 'Messages waiting for a turn (sent with `on_busy` `enqueue` or `interrupt` while one ran); GET …/queue lists them.',
    }),
    tool_approvals: Type.Optional(
      approvalRules(
        "The session's own tool approval rules (matched before the agent's), when it has any. In the replies of create, get and update; not in lists.",
      ),
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Session' },
);

export const CreateSessionBody = Type.Object(
  {
    harness_id: Type.Optional(Uuid),
    agent_id: Type.Optional(Uuid),
    title: Type.Optional(Type.String({ maxLength: 2048 })),
    tags: Type.Optional(Type.Array(Tag, { maxItems: 100 })),
    capabilities: Type.Optional(
      Type.Array(Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Ref('CapabilityRef')]), { maxItems: 250 }),
    ),
    // Any text: a value that names no model of the organisation, a malformed one included, is 404 (spec 4.2).
    model_id: Type.Optional(Type.String({ maxLength: 1024 })),
    // Earlier public API fields (docs/decisions/0044-earlier-api-aliases.md).
    harness_name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'Instead of harness_id: the harness of this name (409 when several carry it).',
      }),
    ),
    agent_name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'Instead of agent_id: the active agent of this name (409 when several carry it).',
      }),
    ),
    tools: Type.Optional(
      Type.Array(Type.Ref('ToolDeclaration'), {
        maxItems: 128,
        description: "Client tools of this session only, added to the agent's (a session tool wins a name clash).",
      }),
    ),
    client_tools: Type.Optional(
      Type.Array(Type.Ref('ClientTool'), { maxItems: 128, description: 'Same as `tools`; give one of the two.' }),
    ),
    parallel_tool_calls: Type.Optional(
      Type.Union([Type.Boolean(), Type.Null()], { description: "false: a step's server tools run one at a time; overrides the agent's." }),
    ),
    tool_approvals: Type.Optional(ToolApprovals),
    compaction: Type.Optional(
      Type.Union([ref(CompactionSettings), Type.Null()], {
        description: "Context compaction of this session, over its agent's field by field; null: the agent's (else the server's).",
      }),
    ),
    locale: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }), Type.Null()], {
        description: 'BCP 47 tag, stored with the session.',
      }),
    ),
    initial_files: Type.Optional(
      Type.Array(Type.Ref('InitialFile'), {
        maxItems: MAX_INITIAL_FILES,
        description:
          'Starter files written into the session file system at creation (a later path replaces an earlier one); non-empty adds `session_file_system`.',
      }),
    ),
  },
  { $id: 'CreateSessionBody', additionalProperties: false },
);

export const UpdateSessionBody = Type.Object(
  {
    title: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
    tags: Type.Optional(Type.Array(Tag, { maxItems: 100 })),
    agent_id: Type.Optional(Uuid),
    tool_approvals: Type.Optional(
      approvalRules(
        "Replaces the session's own approval rules (`[]` removes them), checked as at create. Applies from the session's next turn.",
      ),
    ),
    compaction: Type.Optional(
      Type.Union([ref(CompactionSettings), Type.Null()], {
        description: "Replaces the session's compaction settings (from its next turn on); null removes them (the agent's apply).",
      }),
    ),
  },
  { $id: 'UpdateSessionBody', additionalProperties: false },
);

export const SessionList = PageOf(Type.Ref('Session'), 'SessionList', 'sessions');

export const ListSessionsQuery = Type.Object({
  offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  agent_id: Type.Optional(Uuid),
});

export const EventList = Type.Object(
  {
    data: Type.Array(Type.Ref('Event')),
    has_more: Type.Optional(
      Type.Boolean({
        description:
          'Present (true) when the page stopped at the byte bound before `limit`: continue from its last event (since_id or after_sequence; before_sequence when newest first).',
      }),
    ),
  },
  { $id: 'EventList' },
);

/** A known event type, or empty (`types=`: an empty filter means all types, spec 6.1). */
const EventTypeName = Type.Union([...EVENT_TYPES.map((t) => Type.Literal(t)), Type.Literal('')]);

/**
 * `types` / `exclude`: repeated keys, at most 25 each, known event types only (spec 6.1).
 * `tags`: repeated or comma-separated, an event passes with any of them (src/events/event-filter.ts).
 */
export const EventFilterQuery = {
  types: Type.Optional(Type.Array(EventTypeName, { maxItems: 25 })),
  exclude: Type.Optional(Type.Array(EventTypeName, { maxItems: 25 })),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 25 })),
  since_id: Type.Optional(Uuid),
};

/** Largest sequence a query may name (the int32 range of the reference API). */
const MAX_SEQUENCE = 2_147_483_647;
const ContextId = Type.String({ minLength: 1, maxLength: 256 });

/**
 * The listing's narrowing options beyond the SSE filter, as the reference API and its SDK send
 * them (src/api/events/event-query.ts says how each is read). Unknown keys are ignored, as on
 * every query; the SDK's keys are all declared here, so none is silently dropped.
 */
export const ListEventsQuery = Type.Object({
  ...EventFilterQuery,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'At most this many events (default 1000).' })),
  after_sequence: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEQUENCE, description: 'Only events with a greater sequence.' })),
  before_sequence: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_SEQUENCE,
      description: 'Only events with a smaller sequence; the page is then the last `limit` ones before it.',
    }),
  ),
  order_desc: Type.Optional(Type.Boolean({ description: 'Newest first; the page is the newest `limit` matching events.' })),
  around: Type.Optional(
    Type.String({
      format: 'uuid',
      description: 'An event id: up to `window` positions on each side of it (not with since_id, after_sequence or before_sequence).',
    }),
  ),
  window: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Positions on each side of `around` (default 50).' })),
  from_ts: Type.Optional(Type.String({ format: 'date-time', description: 'Only events with ts at or after this time.' })),
  to_ts: Type.Optional(Type.String({ format: 'date-time', description: 'Only events with ts at or before this time.' })),
  turn_id: Type.Optional(ContextId),
  exec_id: Type.Optional(ContextId),
  trace_id: Type.Optional(ContextId),
  tool_name: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: 'Only the events of that tool (tagged `tool:<name>`).' }),
  ),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "Case-insensitive substring of the event's data." })),
});
export type ListEventsQueryInput = Static<typeof ListEventsQuery>;
export const SseQuery = Type.Object({ ...EventFilterQuery, access_token: Type.Optional(Type.String()) });

export const Message = Type.Object(
  {
    id: Type.String(),
    role: Type.Union([Type.Literal('user'), Type.Literal('agent'), Type.Literal('tool_result')]),
    content: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    created_at: Timestamp,
    tags: Type.Optional(Type.Array(Type.String())),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    controls: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'Message' },
);

export const MessageList = ListOf(Type.Ref('Message'), 'MessageList', 'messages');

export type SessionView = Static<typeof Session>;
export type CreateSessionInput = Static<typeof CreateSessionBody>;
export type UpdateSessionInput = Static<typeof UpdateSessionBody>;
export type MessageView = Static<typeof Message>;

export const sessionSchemas = [
  SessionStatus,
  Session,
  CreateSessionBody,
  UpdateSessionBody,
  SessionList,
  EventContext,
  ...eventSchemas,
  Event,
  EventList,
  Message,
  MessageList,
];
