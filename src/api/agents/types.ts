import type { InferEntity } from '@mikro-orm/core';
import type { Agent } from '../../db/index.js';

/** A loaded agent row. */
export type AgentRow = InferEntity<typeof Agent>;

/** Says whether a model id names an LLM model of the organisation. */
export interface ModelLookup {
  exists(orgId: string, modelId: string): Promise<boolean>;
  /** Ids of the organisation's models whose vendor name (`model_id`, e.g. `gpt-5`) is `name`. */
  idsByName?(orgId: string, name: string): Promise<string[]>;
}

/** The fields a write checks and stores (everything of a row but identity, status and times). */
export type AgentFields = Pick<
  AgentRow,
  | 'name'
  | 'description'
  | 'system_prompt'
  | 'default_model_id'
  | 'tags'
  | 'capabilities'
  | 'client_tools'
  | 'max_iterations'
  | 'display_name'
  | 'model'
  | 'parallel_tool_calls'
  | 'tool_approvals'
  | 'compaction'
>;
