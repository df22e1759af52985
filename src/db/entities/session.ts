import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';
import type { SessionConfig } from '../session-config.js';

export type SessionStatus = 'started' | 'active' | 'idle' | 'waiting_for_tool_results';

/** Cumulative token usage of a session (reported by `session.idled`). */
export interface SessionUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
}

/**
 * A session row. The transcript lives in the event log; this row holds configuration and the
 * status the API checks before accepting a message. `chat_user_id` is set only on a user's
 * global chat session and is unique, which makes that singleton race-free.
 */
export const Session = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid().index(),
    user_id: p.uuid(),
    harness_id: p.uuid(),
    agent_id: p.uuid().nullable(),
    title: p.string().nullable(),
    tags: p.json<string[]>(),
    model_id: p.uuid().nullable(),
    capabilities: p.json<{ ref: string; config?: Record<string, unknown> }[]>(),
    features: p.json<string[]>(),
    /**
     * The harness and agent configuration the session runs with (store/session-config.ts); null
     * only on rows written by a pre-0010 instance. Lazy: it holds the prompts (up to 1 MB each),
     * which listings and status checks do not need.
     */
    config: p.json<SessionConfig>().nullable().lazy(),
    status: p.string().$type<SessionStatus>(),
    current_turn_id: p.uuid().nullable(),
    usage: p.json<SessionUsage>(),
    chat_user_id: p.uuid().nullable().unique(),
    /** Sub-agents (migration 0025): the session, turn and tool call that created this child session. */
    parent_session_id: p.uuid().nullable(),
    parent_tool_call_id: p.string().nullable(),
    parent_turn_id: p.uuid().nullable(),
    /** 0 for a session created through the API, parent's + 1 for a child. */
    subagent_depth: p.integer().default(0),
    /** The iteration budget of this session's turns when lower than its agent's (SUBAGENT_MAX_ITERATIONS). */
    max_iterations: p.integer().nullable(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
