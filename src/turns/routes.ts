import { Type } from '@sinclair/typebox';
import { IdParams } from '../../schemas/common.js';
import type { ClientToolResultInput, InputPart, MessageControlsInput } from '../../schemas/turns.js';
import { defineRoutes, type Route } from '../http/route.js';
import { checkMetadata, foldControls, mergeTags } from './message-aliases.js';
import type { TurnService } from './turn-service.js';

const tags = ['turns'];
const err = Type.Ref('ErrorResponse');

interface SubmitBody {
  message: { content: InputPart[]; controls?: MessageControlsInput | null; tags?: string[] };
  controls?: MessageControlsInput | null;
  tags?: string[] | null;
  metadata?: Record<string, unknown> | null;
}

/** Spec 4.2: messages start turns, cancel stops one, tool-results resume one waiting for the client. */
export function turnRoutes({ turns }: { turns: TurnService }): Route[] {
  return defineRoutes([
    {
      method: 'POST',
      path: '/v1/sessions/:id/messages',
      auth: 'user',
      summary: 'Send a message (starts a turn)',
      tags,
      idempotent: true,
      schema: {
        params: IdParams,
        body: Type.Ref('SubmitMessageBody'),
        response: { 201: Type.Ref('Message'), 400: err, 404: err, 409: err, 422: err },
      },
      async handler({ params, body }, { principal }) {
        const { message, controls, tags, metadata } = body as SubmitBody;
        const stored = await turns.submitMessage(
          principal,
          params.id,
          message.content,
          foldControls(message.controls ?? controls ?? {}),
          mergeTags(message.tags, tags),
          checkMetadata(metadata),
        );
        return { status: 201, body: stored };
      },
    },
    {
      method: 'POST',
      path: '/v1/sessions/:id/cancel',
      auth: 'user',
      summary: 'Cancel the running turn',
      tags,
      schema: { params: IdParams, response: { 200: Type.Ref('CancelTurnResponse'), 404: err, 422: err } },
      async handler({ params }, { principal }) {
        return { status: 200, body: await turns.cancel(principal, params.id) };
      },
    },
    {
      method: 'POST',
      path: '/v1/sessions/:id/tool-results',
      auth: 'user',
      summary: 'Submit client tool results',
      tags,
      idempotent: true,
      schema: {
        params: IdParams,
        body: Type.Ref('SubmitToolResultsBody'),
        response: { 200: Type.Ref('SubmitToolResultsResponse'), 400: err, 404: err, 409: err, 422: err },
      },
      async handler({ params, body }, { principal }) {
        const { tool_results } = body as { tool_results: ClientToolResultInput[] };
        return { status: 200, body: await turns.submitToolResults(principal, params.id, tool_results) };
      },
    },
  ]);
}
