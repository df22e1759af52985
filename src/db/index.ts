export { createStore } from './store.js';
export type { Store, StoreOptions } from './store.js';
export { createIdempotencyKeys, defaultIdempotencyKeysOptions } from './idempotency-keys.js';
export { createProcessLiveness } from './process-liveness.js';
export type { ProcessLiveness, ProcessLivenessOptions } from './process-liveness.js';
export type { IdempotencyBegin, IdempotencyKeys, IdempotencyKeysOptions, StoredOutcome } from './idempotency-keys.js';
export { Organization, User, ApiKey, Session, entities } from './entities/index.js';
export { Agent, Harness } from './entities/index.js';
export { LlmProviderEntity, LlmModelEntity } from './entities/index.js';
export { orgScope } from './org-scope.js';
export { assertOrgHasRoom, orgCountUpsert, orgLimitError } from './org-caps.js';
export { isDatabaseUnavailable } from './unavailable.js';
export type { OrgScope, OrgOwned } from './org-scope.js';
export {
  EFFECTIVE_SESSION_CONFIG_SQL,
  LIVE_SESSION_CONFIG_SQL,
  SESSION_LAYERS_JOIN_SQL,
  parseSessionConfig,
  snapshotAgent,
  snapshotHarness,
} from './session-config.js';
export type { AgentSnapshot, HarnessSnapshot, SessionAdditions, SessionConfig } from './session-config.js';
export { modelProviderSql } from './model-provider-sql.js';
export type { ModelProviderRow } from './model-provider-sql.js';
export { preparedSql } from './prepared-sql.js';
export type { PreparedSql } from './prepared-sql.js';
export { acquireDataDirLock } from './data-dir-lock.js';
export type { DataDirLock } from './data-dir-lock.js';
export type { EmbeddedDatabase } from './pglite-thread.js';
