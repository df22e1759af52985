// Every named schema ($id) of the API. Route tables reference them; the OpenAPI document
// lists them under components. Add each new schema module's exports here.
import type { TSchema } from '@sinclair/typebox';
import { CapabilityRef, ErrorResponse, Health } from './common.js';
import { sessionSchemas } from './sessions.js';
import { turnSchemas } from './turns.js';
import { authSchemas } from './auth.js';
import { userSchemas } from './users.js';
import { orgSchemas } from './orgs.js';
import { capabilitySchemas } from './capabilities.js';
import { agentSchemas } from './agents.js';
import { harnessSchemas } from './harnesses.js';
import { llmSchemas } from './llm.js';
import { fsSchemas } from './fs.js';
import { storageSchemas } from './storage.js';
import { imageSchemas } from './images.js';
import { connectionSchemas } from './connections.js';
import { metricsSchemas } from './metrics.js';
import { webhookSchemas } from './webhooks.js';
import { approvalSchemas } from './approvals.js';
import { compactionSchemas } from './compaction.js';

export const namedSchemas: TSchema[] = [
  ErrorResponse,
  Health,
  CapabilityRef,
  // Referenced by agents and sessions: registered before them.
  ...approvalSchemas,
  ...compactionSchemas,
  ...sessionSchemas,
  ...turnSchemas,
  ...authSchemas,
  ...userSchemas,
  ...orgSchemas,
  ...capabilitySchemas,
  ...agentSchemas,
  ...harnessSchemas,
  ...llmSchemas,
  ...fsSchemas,
  ...storageSchemas,
  ...imageSchemas,
  ...connectionSchemas,
  ...metricsSchemas,
  ...webhookSchemas,
];
