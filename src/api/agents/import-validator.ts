import type { ErrorObject } from 'ajv';
import { AgentCreate, AgentStatus, ClientTool, ToolDeclaration, type AgentCreateInput } from '../../../schemas/agents.js';
import { CapabilityItem } from '../../../schemas/capabilities.js';
import { CapabilityRef } from '../../../schemas/common.js';
import { ToolApprovalPolicy, ToolApprovalRule } from '../../../schemas/approvals.js';
import { CompactionSettings } from '../../../schemas/compaction.js';
import { InitialFile } from '../../../schemas/fs.js';
import { InvalidRequestError } from '../../errors.js';
import { addNamedSchemas, ajv, resolveRef } from '../../validation/index.js';
import { applyDefaults } from '../../validation/index.js';
import { FORMAT_NAMES, type DefinitionFormat } from '../../offthread/index.js';

/**
 * Validates an imported agent document against the create schema (the same rules as
 * POST /v1/agents, compiled once); 400 names the format and the first offending field.
 */
export function createImportValidator() {
  addNamedSchemas([
    CapabilityRef,
    CapabilityItem,
    ClientTool,
    ToolDeclaration,
    AgentStatus,
    InitialFile,
    ToolApprovalPolicy,
    ToolApprovalRule,
    CompactionSettings,
  ]);
  const validate = ajv.compile(AgentCreate);

  return function validateImport(format: DefinitionFormat, doc: Record<string, unknown>): AgentCreateInput {
    applyDefaults(AgentCreate, doc, resolveRef);
    if (validate(doc)) return doc as AgentCreateInput;
    throw new InvalidRequestError(`Invalid request: ${FORMAT_NAMES[format]} agent definition: ${describe(validate.errors?.[0])}`);
  };
}

function describe(e: ErrorObject | undefined): string {
  if (!e) return 'invalid';
  const path = e.instancePath.split('/').filter(Boolean).join('.');
  if (e.keyword === 'required') return `${path ? path + '.' : ''}${String(e.params['missingProperty'])} is required`;
  if (e.keyword === 'additionalProperties') return `${path ? path + '.' : ''}${String(e.params['additionalProperty'])} is not allowed`;
  return `${path || 'document'} ${e.message ?? 'is invalid'}`;
}
