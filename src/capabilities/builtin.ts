import { currentTimeCapability } from './current-time.js';
import { sessionFileSystemCapability } from './file-system/capability.js';
import { sessionScheduleCapability } from './session-schedule.js';
import { sessionStorageCapability } from './session-storage.js';
import { sessionSqlDatabaseCapability } from './sql/capability.js';
import { statelessTodoListCapability } from './stateless-todo-list.js';
import type { Capability } from './types.js';
import { createWebFetchCapability, webFetchCapability, type WebFetchCapabilityOptions } from './web-fetch/capability.js';

/** The ids of the built-in capabilities (spec 2.1), in listing order. */
export const BUILTIN_CAPABILITY_IDS = [
  'current_time',
  'web_fetch',
  'session_file_system',
  'stateless_todo_list',
  'session_storage',
  'session_schedule',
  'session_sql_database',
] as const;

/** Operator settings of the built-in capabilities (defaults: none). */
export interface BuiltinCapabilityOptions {
  webFetch?: WebFetchCapabilityOptions;
  /** The `mcp` capability (mcp/capability.ts; it owns connections, so the app builds and closes it), listed last. */
  mcp?: Capability;
  /** The `sub_agents` capability (sub-agents/capability.ts; bound to sessions and turns by the app), listed after `mcp`. */
  subAgents?: Capability;
}

/** The seven built-in capabilities, in listing order, then `mcp` and `sub_agents` when given (a fresh array each call). */
export function builtinCapabilities(opts: BuiltinCapabilityOptions = {}): Capability[] {
  return [
    currentTimeCapability,
    opts.webFetch ? createWebFetchCapability(opts.webFetch) : webFetchCapability,
    sessionFileSystemCapability,
    statelessTodoListCapability,
    sessionStorageCapability,
    sessionScheduleCapability,
    sessionSqlDatabaseCapability,
    ...(opts.mcp ? [opts.mcp] : []),
    ...(opts.subAgents ? [opts.subAgents] : []),
  ];
}
