import type { TurnService } from './turn-service.js';
import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import { route, type Route } from '../../http/index.js';
import { checkMetadata, foldControls, mergeTags } from './message-aliases.js';
import { CancelTurnResponse, SubmitMessageBody, SubmitToolResultsBody, SubmitToolResultsResponse } from '../../../schemas/turns.js';
import { Message } from '../../../schemas/sessions.js';
import { SubmitApprovalsBody, SubmitApprovalsResponse } from '../../../schemas/approvals.js';

const tags = ['turns'];
const err = ref(ErrorResponse);

/** Spec 4.2: messages start turns, cancel stops one, tool-results and approvals resume one waiting for the client or a person. */
export function turnRoutes({ turns }: { turns: TurnService }): Route[] {
  return [
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/messages',
        auth: 'user',
        summary: 'Send a message (starts a turn)',
        tags,
        idempotent: true,
        schema: {
          params: IdParams,
          body: ref(SubmitMessageBody),
          response: { 201: ref(Message), 400: err, 404: err, 409: err, 422: err },
        },
      },
      async ({ params, body }, { principal, idempotency }) => {
        const { message, controls, tags, metadata } = body;
        const stored = await turns.submitMessage(
          principal,
          params.id,
          message.content,
          foldControls(message.controls ?? controls ?? {}),
          mergeTags(message.tags, tags),
          checkMetadata(metadata),
          idempotency,
        );
        return { status: 201, body: stored };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/cancel',
        auth: 'user',
        summary: 'Cancel the running turn',
        tags,
        schema: { params: IdParams, response: { 200: ref(CancelTurnResponse), 404: err, 422: err } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await turns.cancel(principal, params.id) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/tool-results',
        auth: 'user',
        summary: 'Submit client tool results',
        tags,
        idempotent: true,
        schema: {
          params: IdParams,
          body: ref(SubmitToolResultsBody),
          response: { 200: ref(SubmitToolResultsResponse), 400: err, 404: err, 409: err, 422: err },
        },
      },
      async ({ params, body }, { principal }) => {
        const { tool_results } = body;
        return { status: 200, body: await turns.submitToolResults(principal, params.id, tool_results) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/approvals',
        auth: 'user',
        summary: "Approve or deny tool calls waiting for approval (a denial's reason is the result the LLM sees)",
        tags,
        idempotent: true,
        schema: {
          params: IdParams,
          body: ref(SubmitApprovalsBody),
          response: { 200: ref(SubmitApprovalsResponse), 400: err, 404: err, 409: err, 422: err },
        },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await turns.submitApprovals(principal, params.id, body.approvals) };
      },
    ),
  ];
}
