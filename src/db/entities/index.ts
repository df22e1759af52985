// Every entity the ORM knows. Add one line per new entity file.
import { Organization } from './organization.js';
import { User } from './user.js';
import { ApiKey } from './api-key.js';
import { Session } from './session.js';
import { TokenFamily } from './token-family.js';
import { RefreshToken } from './refresh-token.js';
import { AuthSecret } from './auth-secret.js';
import { Agent } from './agent.js';
import { Harness } from './harness.js';
import { SessionFile } from './session-file.js';
import { SessionKvEntry } from './session-kv-entry.js';
import { SessionSecret } from './session-secret.js';
import { SessionSqlDatabaseRow } from './session-sql-database.js';
import { SessionSchedule } from './session-schedule.js';
import { Image } from './image.js';
import { UserConnection } from './user-connection.js';
import { LlmProviderEntity } from './llm-provider.js';
import { LlmModelEntity } from './llm-model.js';

export { Organization, User, ApiKey, Session };
export { TokenFamily, RefreshToken, AuthSecret };
export { Agent, Harness };
export { SessionFile, SessionKvEntry, SessionSecret, SessionSqlDatabaseRow, SessionSchedule, Image, UserConnection };

export { LlmProviderEntity, LlmModelEntity };

export const entities = [
  Organization,
  User,
  ApiKey,
  Session,
  TokenFamily,
  RefreshToken,
  AuthSecret,
  Agent,
  Harness,
  SessionFile,
  SessionKvEntry,
  SessionSecret,
  SessionSqlDatabaseRow,
  SessionSchedule,
  Image,
  UserConnection,
  LlmProviderEntity,
  LlmModelEntity,
];
