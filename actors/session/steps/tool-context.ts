/**
 * What server tools run against. The turn engine builds one `ToolContext` per tool call from
 * the session's storage (a `ToolContextFactory`, implemented by the storage module) plus the
 * call's config, abort signal and clock.
 */
import { ToolError, type CapabilityConfig, type ToolContext } from '../../../src/capabilities/index.js';

/** The session a tool runs for. */
export interface ToolSessionRef {
  session_id: string;
  org_id: string;
  /**
   * True when the turn acts for the user who created the session: only then may tools use
   * that user's connection secrets (`connection:<provider>`).
   */
  may_use_connections?: boolean;
}

/** The per-session storage members of a `ToolContext`. */
export type SessionToolStorage = Pick<ToolContext, 'fs' | 'kv' | 'secrets' | 'sql' | 'schedules'>;

/** Builds the storage a session's tools use; called once per act phase. */
export type ToolContextFactory = (session: ToolSessionRef) => SessionToolStorage | Promise<SessionToolStorage>;

export const STORAGE_UNAVAILABLE_MESSAGE = 'capability storage unavailable';

/** A storage port whose every method fails with a ToolError the LLM can read. */
function unavailablePort<T extends object>(): T {
  return new Proxy({} as T, {
    get(_target, prop) {
      // Not a thenable: `await port` must not call us.
      if (prop === 'then' || typeof prop === 'symbol') return undefined;
      return async () => {
        throw new ToolError(STORAGE_UNAVAILABLE_MESSAGE);
      };
    },
  });
}

/** The default factory until session storage is wired: storage tools fail politely, others work. */
export const unavailableToolStorage: ToolContextFactory = () => ({
  fs: unavailablePort(),
  kv: unavailablePort(),
  secrets: unavailablePort(),
  sql: unavailablePort(),
  schedules: unavailablePort(),
});

/** One call's context. */
export function toolContextFor(
  session: ToolSessionRef,
  storage: SessionToolStorage,
  config: CapabilityConfig,
  signal: AbortSignal,
  now: () => Date,
  turn?: Pick<ToolContext, 'call' | 'reportSubagent'>,
): ToolContext {
  return { session_id: session.session_id, org_id: session.org_id, config, signal, now, ...storage, ...turn };
}
