import { sampleSchema } from './openapi-samples.js';

type Json = Record<string, unknown>;

const ID = '0195f3c0-8a2b-7c3d-9e4f-5a6b7c8d9e0f';
const AGENT_ID = '0195f3c0-8a2b-7c3d-9e4f-000000000a01';
const EVENT_ID = '0195f3c0-9b00-7000-8000-00000000e001';

/** Hand-written examples of the quick-start operations (the rest are sampled from their schemas). */
const CURATED: Record<string, { request?: unknown; response?: unknown }> = {
  post_agents: {
    request: { name: 'Support agent', system_prompt: 'You are a helpful assistant.', capabilities: ['current_time'] },
  },
  post_sessions: { request: { agent_id: AGENT_ID, title: 'First session' } },
  post_sessions_by_id_messages: { request: { message: { content: [{ type: 'text', text: 'Hello!' }] } } },
  post_sessions_by_id_tool_results: { request: { tool_results: [{ tool_call_id: 'call_1', result: { answer: 'blue' } }] } },
  post_agents_import: {
    request:
      '---\nname: Support agent\ndescription: Answers questions about the product.\ncapabilities:\n  - current_time\n---\nYou are a helpful assistant.\n',
  },
  post_images: {
    response: {
      id: 'img_0123456789abcdef0123456789abcdef',
      session_id: ID,
      filename: 'photo.png',
      content_type: 'image/png',
      size_bytes: 20480,
      created_at: '2026-01-15T09:30:00.000Z',
    },
  },
  get_agents_by_id_export: {
    response:
      '---\nname: Support agent\ndescription: Answers questions about the product.\ncapabilities:\n  - current_time\n---\nYou are a helpful assistant.\n',
  },
  get_sessions_by_id_sse: {
    response: [
      'event: connected\ndata: {"status":"connected"}\n',
      `retry: 100\nid: ${EVENT_ID}\nevent: output.message.delta\ndata: {"id":"${EVENT_ID}","type":"output.message.delta","ts":"2026-01-15T09:30:00.000Z","session_id":"${ID}","sequence":7,"context":{"turn_id":"${ID}"},"data":{"turn_id":"${ID}","delta":"Hello","accumulated":"Hello"}}\n`,
      ': heartbeat\n',
      'event: disconnecting\ndata: {"reason":"connection_cycle","retry_ms":100}\n',
    ].join('\n'),
  },
};

/** Messages of the error catalogue by status (spec 7), for error examples. */
const ERROR_MESSAGES: Record<string, string> = {
  '400': 'Invalid request',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'Not found',
  '405': 'Method not allowed',
  '409': 'Conflict',
  '413': 'Payload too large',
  '415': 'Unsupported media type',
  '422': 'Unprocessable entity',
  '429': 'Too many requests',
  '500': 'Internal server error',
  '503': 'Service unavailable',
};

/**
 * Gives every operation examples: each parameter, the JSON request body and every response
 * (hand-written for the quick-start operations, sampled from the schema otherwise; errors in the
 * `{error, status}` shape). `redocly lint` checks each example against its schema.
 */
export function addExamples(paths: Record<string, Record<string, Json>>, components: Record<string, unknown>): void {
  for (const ops of Object.values(paths)) {
    for (const op of Object.values(ops)) {
      const curated = CURATED[op['operationId'] as string] ?? {};
      for (const p of (op['parameters'] as Json[] | undefined) ?? []) {
        const value = sampleSchema(p['schema'], components, 'request', 0, p['name'] as string);
        if (value !== undefined) p['example'] = value;
      }
      const body = op['requestBody'] as { content: Record<string, Json> } | undefined;
      for (const [type, media] of Object.entries(body?.content ?? {})) {
        const value = curated.request ?? (type === 'application/json' ? sampleSchema(media['schema'], components, 'request') : undefined);
        if (value !== undefined && type !== 'multipart/form-data') media['example'] = value;
      }
      for (const [status, response] of Object.entries(op['responses'] as Record<string, { content?: Record<string, Json> }>)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          const isError = (media['schema'] as Json | undefined)?.['$ref'] === '#/components/schemas/ErrorResponse';
          const value = isError
            ? { error: ERROR_MESSAGES[status] ?? 'Error', status: Number(status) }
            : ((Number(status) < 400 ? curated.response : undefined) ??
              (type === 'application/json' ? sampleSchema(media['schema'], components, 'response') : undefined));
          if (value !== undefined) media['example'] = value;
        }
      }
    }
  }
}
