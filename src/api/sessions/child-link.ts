/**
 * A child session's link to the tool call that creates it (sub-agents, docs/decisions/0102-sub-agents.md).
 * Checked inside the insert's transaction, under a lock on the parent session, so parallel calls
 * of one turn never exceed the fan-out and a redelivered call finds the child it made before.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { UnprocessableError } from '../../errors.js';

export interface SessionLink {
  parent_session_id: string;
  parent_tool_call_id: string;
  parent_turn_id: string;
  /** The child's depth (parent's + 1). */
  depth: number;
  /** The child's iteration budget per turn. */
  max_iterations: number;
  /** Children one parent turn may create (SUBAGENT_MAX_CHILDREN_PER_TURN). */
  max_children_per_turn: number;
}

/** The columns a link adds to the session row (all null/0 for a session created through the API). */
export function linkColumns(link: SessionLink | undefined): unknown[] {
  if (!link) return [null, null, null, 0, null];
  return [link.parent_session_id, link.parent_tool_call_id, link.parent_turn_id, link.depth, link.max_iterations];
}

/**
 * The child this tool call already created (a redelivery), or null when there is none and the
 * turn has room for one more; UnprocessableError when it has not. Call inside the insert's transaction.
 */
export async function existingChildOrRoom(em: EntityManager, link: SessionLink): Promise<string | null> {
  const tx = em as unknown as SqlEntityManager;
  await tx.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`subagents:${link.parent_session_id}`]);
  const [existing] = await tx.execute<{ id: string }[]>('select id from sessions where parent_session_id = ? and parent_tool_call_id = ?', [
    link.parent_session_id,
    link.parent_tool_call_id,
  ]);
  if (existing) return existing.id;
  const [row] = await tx.execute<{ n: unknown }[]>(
    'select count(*) as n from sessions where parent_session_id = ? and parent_turn_id = ?',
    [link.parent_session_id, link.parent_turn_id],
  );
  if (Number(row?.n ?? 0) >= link.max_children_per_turn)
    throw new UnprocessableError(
      `Sub-agent limit reached: a turn may start at most ${link.max_children_per_turn} sub-agent sessions (SUBAGENT_MAX_CHILDREN_PER_TURN)`,
    );
  return null;
}
