import {
  AgentCreate,
  AgentExampleList,
  AgentImportQuery,
  AgentList,
  AgentListQuery,
  AgentPatch,
  AgentPreview,
  AgentPreviewRequest,
  Agent,
} from '../../../schemas/agents.js';
import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import { aliasedListReply } from '../../http/index.js';
import type { AgentService } from './service.js';
import { storedContentHeaders } from '../../http/index.js';
import { route, type Route } from '../../http/index.js';
import { AGENT_BODY_LIMITS } from './limits.js';

const errors = { 404: ref(ErrorResponse), 422: ref(ErrorResponse) };
const tags = ['agents'];

/** Spec 4.1: agents of the caller's organisation. */
export function agentsRoutes({ agents }: { agents: AgentService }): Route[] {
  return [
    route(
      {
        method: 'POST',
        path: '/v1/agents',
        auth: 'user',
        summary: 'Create an agent',
        tags,
        ...AGENT_BODY_LIMITS,
        idempotent: true,
        schema: { body: ref(AgentCreate), response: { 201: ref(Agent), 409: ref(ErrorResponse), ...errors } },
      },
      async ({ body }, { principal }) => {
        return { status: 201, body: await agents.create(principal, body) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/agents',
        auth: 'user',
        summary: 'List agents (archived ones with include_archived=true)',
        tags,
        schema: { query: AgentListQuery, response: { 200: ref(AgentList) } },
      },
      async ({ query }, { principal }) => {
        return aliasedListReply(200, await agents.list(principal.org_id, query), 'agents');
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/agents/import',
        auth: 'user',
        summary: 'Create an agent from Markdown with YAML front matter, YAML or JSON',
        tags,
        bodyKind: 'raw',
        ...AGENT_BODY_LIMITS,
        schema: { query: AgentImportQuery, response: { 201: ref(Agent), ...errors } },
      },
      async ({ rawBody, headers, query }, { principal }) => {
        const example = query['from-example'];
        if (example !== undefined) return { status: 201, body: await agents.importExample(principal, example) };
        return { status: 201, body: await agents.importDefinition(principal, rawBody, headers['content-type']) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/agent-examples',
        auth: 'user',
        summary: 'The example agents that POST /v1/agents/import?from-example=<name> imports',
        tags,
        schema: { response: { 200: ref(AgentExampleList) } },
      },
      async () => {
        return { status: 200, body: agents.listExamples() };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/agents/preview',
        auth: 'user',
        summary: 'The runtime system prompt and tools of an agent definition; nothing is stored',
        tags,
        ...AGENT_BODY_LIMITS,
        schema: { body: ref(AgentPreviewRequest), response: { 200: ref(AgentPreview), 422: ref(ErrorResponse) } },
      },
      async ({ body }, { principal }) => {
        return { status: 200, body: await agents.preview(principal, body) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/agents/:id',
        auth: 'user',
        summary: 'Get an agent (archived ones too)',
        tags,
        schema: { params: IdParams, response: { 200: ref(Agent), 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await agents.get(principal.org_id, params.id) };
      },
    ),
    route(
      {
        method: 'PATCH',
        path: '/v1/agents/:id',
        auth: 'user',
        summary: 'Update the given fields of an agent (never its status)',
        tags,
        ...AGENT_BODY_LIMITS,
        schema: { params: IdParams, body: ref(AgentPatch), response: { 200: ref(Agent), ...errors } },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await agents.patch(principal, params.id, body) };
      },
    ),
    route(
      {
        method: 'PUT',
        path: '/v1/agents/:id',
        auth: 'user',
        summary: 'Create (201) or replace (200) an agent under a client id (UUID v4/v7)',
        tags,
        ...AGENT_BODY_LIMITS,
        schema: { params: IdParams, body: ref(AgentCreate), response: { 200: ref(Agent), 201: ref(Agent), ...errors } },
      },
      async ({ params, body }, { principal }) => {
        const { created, agent } = await agents.put(principal, params.id, body);
        return created ? { status: 201, body: agent } : { status: 200, body: agent };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/agents/:id',
        auth: 'user',
        summary: 'Archive an agent',
        tags,
        schema: { params: IdParams, response: { 204: null, 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        await agents.archive(principal, params.id);
        return { status: 204 };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/agents/:id/copy',
        auth: 'user',
        summary: 'Copy an agent under a new id, named "<name> (copy)"',
        tags,
        schema: { params: IdParams, response: { 201: ref(Agent), 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        return { status: 201, body: await agents.copy(principal, params.id) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/agents/:id/export',
        auth: 'user',
        summary: 'Export an agent as Markdown with YAML front matter (imports back equal)',
        tags,
        schema: { params: IdParams, response: { 200: 'text/markdown', 404: ref(ErrorResponse) } },
      },
      async ({ params }, { principal }) => {
        const { fileName, markdown } = await agents.exportDefinition(principal.org_id, params.id);
        return {
          status: 200,
          raw: markdown,
          contentType: 'text/markdown; charset=utf-8',
          headers: { ...storedContentHeaders('text/markdown'), 'Content-Disposition': `attachment; filename="${fileName}"` },
        };
      },
    ),
  ];
}
