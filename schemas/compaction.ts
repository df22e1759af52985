/**
 * Context compaction (issue 26; docs/decisions/0100 and 0103): the body and answer of
 * POST /v1/sessions/{id}/compact, and the per-agent and per-session settings.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';

/** Longest `instructions` of a compaction on demand: they join the summariser's system prompt. */
export const MAX_COMPACTION_INSTRUCTIONS = 2_000;

export const CompactSessionBody = Type.Object(
  {
    instructions: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_COMPACTION_INSTRUCTIONS,
        description: 'What the summary should keep or stress (added to the summariser’s prompt).',
      }),
    ),
  },
  { $id: 'CompactSessionBody', additionalProperties: false },
);
export type CompactSessionBodyInput = Static<typeof CompactSessionBody>;

export const CompactionAccepted = Type.Object(
  {
    session_id: Uuid,
    turn_id: Type.String({
      description:
        'The compaction turn: follow it over SSE or the events API (`turn.started` kind `compaction`, then `session.compacted`, `turn.completed` and `session.idled`; or `turn.failed` `nothing_to_compact`). POST …/cancel cancels it.',
    }),
    status: Type.Literal('active', { description: 'The session runs the compaction; it answers messages again once idle.' }),
  },
  {
    $id: 'CompactionAccepted',
    examples: [{ session_id: '019a0000-0000-7000-8000-0000000000e0', turn_id: '019a0000-0000-7000-8000-000000000001', status: 'active' }],
  },
);
export type CompactionAcceptedView = Static<typeof CompactionAccepted>;

/** COMPACTION_THRESHOLD_PERCENT's default (docs/operations.md §33). */
export const DEFAULT_COMPACTION_THRESHOLD_PERCENT = 80;

/** Tightest threshold a tenant may set: below it every step would compact. */
export const MIN_COMPACTION_THRESHOLD_PERCENT = 10;

/**
 * On agents and sessions (a session's fields win over its agent's, field by field). The
 * operator's COMPACTION_THRESHOLD_PERCENT stays the bound: a higher value is refused (422).
 */
export const CompactionSettings = Type.Object(
  {
    threshold_percent: Type.Optional(
      Type.Union([Type.Integer({ minimum: MIN_COMPACTION_THRESHOLD_PERCENT, maximum: 100 }), Type.Null()], {
        description:
          'Compact when a request would hold more than this share of the model’s window, in percent; at most the server’s COMPACTION_THRESHOLD_PERCENT (default 80). Null: the server’s.',
      }),
    ),
    model_id: Type.Optional(
      Type.Union([Uuid, Type.Null()], {
        description: 'A model of the organisation that writes the summaries; null: the session’s own model.',
      }),
    ),
  },
  { $id: 'CompactionSettings', additionalProperties: false },
);
export type CompactionSettingsInput = Static<typeof CompactionSettings>;

export const compactionSchemas = [CompactSessionBody, CompactionAccepted, CompactionSettings];
