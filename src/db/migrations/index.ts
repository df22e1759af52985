// Checked-in migrations, applied in this order at start. Append new ones; never edit applied ones.
import { CoreMigration } from './0001-core.js';
import { SessionsMigration } from './0005-sessions.js';
import { TurnsMigration } from './0008-turns.js';
import { AuthMigration } from './0003-auth.js';
import { AgentsMigration } from './0004-agents.js';
import { StorageMigration } from './0007-storage.js';
import { LlmMigration } from './0006-llm.js';
import { SessionConfigMigration } from './0010-session-config.js';
import { AgentCreatorMigration } from './0012-agent-creator.js';
import { AgentCompatMigration } from './0013-agent-compat.js';
import { IdempotencyKeysMigration } from './0014-idempotency-keys.js';
import { InstanceMetricsMigration } from './0015-instance-metrics.js';
import { IdempotencyReservationMigration } from './0016-idempotency-reservation.js';
import { ProcessLivenessMigration } from './0017-process-liveness.js';
import { TurnVoidsMigration } from './0018-turn-voids.js';
import { SessionsBusyIndexMigration } from './0019-sessions-busy-index.js';
import { SecretAllowedHostsMigration } from './0020-secret-allowed-hosts.js';
import { TurnBegunMigration } from './0021-turn-begun.js';
import { WebhooksMigration } from './0022-webhooks.js';
import { QueuedMessagesMigration } from './0023-queued-messages.js';
import { AgentToolApprovalsMigration } from './0024-agent-tool-approvals.js';
import { SubAgentsMigration } from './0025-sub-agents.js';
import { SessionSnapshotsMigration } from './0026-session-snapshots.js';
import { ModelLimitsMigration } from './0027-model-limits.js';
import { AgentCompactionMigration } from './0028-agent-compaction.js';
import { OrgRowCountsMigration } from './0029-org-row-counts.js';

export const migrations = [
  CoreMigration,
  SessionsMigration,
  AuthMigration,
  AgentsMigration,
  StorageMigration,
  TurnsMigration,
  LlmMigration,
  SessionConfigMigration,
  AgentCreatorMigration,
  AgentCompatMigration,
  IdempotencyKeysMigration,
  InstanceMetricsMigration,
  IdempotencyReservationMigration,
  ProcessLivenessMigration,
  TurnVoidsMigration,
  SessionsBusyIndexMigration,
  SecretAllowedHostsMigration,
  TurnBegunMigration,
  WebhooksMigration,
  QueuedMessagesMigration,
  AgentToolApprovalsMigration,
  SubAgentsMigration,
  SessionSnapshotsMigration,
  ModelLimitsMigration,
  AgentCompactionMigration,
  OrgRowCountsMigration,
];
