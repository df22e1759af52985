import type { TurnService } from './turn-service.js';
import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import { route, type Route } from '../../http/index.js';
import { checkMetadata, foldControls, mergeTags } from './message-aliases.js';
import {
  CancelTurnResponse,
  QueuedMessage,
  QueuedMessageList,
  QueuedMessageParams,
  SubmitMessageBody,
  SubmitToolResultsBody,
  SubmitToolResultsResponse,
} from '../../../schemas/turns.js';
import { Message } from '../../../schemas/sessions.js';
import { SubmitApprovalsBody, SubmitApprovalsResponse } from '../../../schemas/approvals.js';
import { CompactionAccepted, CompactSessionBody } from '../../../schemas/compaction.js';

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
        summary: 'Send a message (starts a turn, or waits while one runs: on_busy)',
        tags,
        idempotent: true,
        schema: {
          params: IdParams,
          body: ref(SubmitMessageBody),
          response: { 201: ref(Message), 202: ref(QueuedMessage), 400: err, 404: err, 409: err, 422: err, 429: err },
        },
      },
      async ({ params, body }, { principal, idempotency }) => {
        const { message, controls, tags, metadata, on_busy } = body;
        const sent = await turns.sendMessage(principal, {
          sessionId: params.id,
          content: message.content,
          controls: foldControls(message.controls ?? controls ?? {}),
          tags: mergeTags(message.tags, tags),
          metadata: checkMetadata(metadata),
          onBusy: on_busy ?? 'reject',
          acceptance: idempotency,
        });
        return sent.kind === 'started' ? { status: 201, body: sent.message } : { status: 202, body: sent.queued };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/sessions/:id/queue',
        auth: 'user',
        summary: 'List the messages waiting for a turn',
        tags,
        schema: { params: IdParams, response: { 200: ref(QueuedMessageList), 404: err } },
      },
      async ({ params }, { principal }) => {
        const data = await turns.queued.list(principal, params.id);
        return { status: 200, body: { data, total: data.length } };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/sessions/:id/queue/:queued_id',
        auth: 'user',
        summary: 'Cancel a queued message',
        tags,
        schema: { params: QueuedMessageParams, response: { 200: ref(QueuedMessage), 404: err, 409: err } },
      },
      async ({ params }, { principal }) => {
        return { status: 200, body: await turns.queued.cancelQueued(principal, params.id, params.queued_id) };
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
        path: '/v1/sessions/:id/compact',
        auth: 'user',
        summary: 'Compact the history now: a summary replaces all but the newest exchange in later requests (cancel with POST …/cancel)',
        tags,
        idempotent: true,
        schema: {
          params: IdParams,
          body: ref(CompactSessionBody),
          response: { 202: ref(CompactionAccepted), 400: err, 404: err, 409: err, 429: err },
        },
      },
      async ({ params, body }, { principal }) => {
        return { status: 202, body: await turns.compact(principal, params.id, body?.instructions) };
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
