import { Type, type Static } from '@sinclair/typebox';
import { ListOf, ref, Timestamp, Uuid } from './common.js';

/** Longest text part of a user message (bodies are capped at MAX_BODY_BYTES anyway). */
export const MAX_TEXT_PART_CHARS = 1_000_000;
export const MAX_MESSAGE_PARTS = 100;

export const TextInputPart = Type.Object(
  { type: Type.Literal('text'), text: Type.String({ maxLength: MAX_TEXT_PART_CHARS }) },
  { $id: 'TextInputPart', additionalProperties: false },
);

/** An image uploaded first through POST /v1/images, in the caller's organisation (spec 4.2). */
export const ImageFileInputPart = Type.Object(
  {
    type: Type.Literal('image_file'),
    image_id: Type.String({ minLength: 1, maxLength: 128 }),
    filename: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()])),
  },
  { $id: 'ImageFileInputPart', additionalProperties: false },
);

/**
 * A structured reply, OpenAI's `response_format` shape (docs/decisions/0098-structured-replies.md):
 * the turn's final reply is JSON matching `json_schema.schema` (or any JSON object for
 * `json_object`), validated before the turn completes. A schema that does not compile, or is
 * larger than the operator's cap, is refused with 400.
 */
export const ResponseFormat = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('json_schema'),
        json_schema: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'Default `reply`.' })),
            description: Type.Optional(Type.String({ maxLength: 1024 })),
            schema: Type.Record(Type.String(), Type.Unknown(), { description: 'The JSON Schema the reply must match.' }),
            strict: Type.Optional(Type.Boolean({ description: "Passed to vendors that have it (OpenAI's strict mode)." })),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('json_object') }, { additionalProperties: false }),
  ],
  { $id: 'ResponseFormat' },
);

/** Per-message runtime controls (spec 2.4); an unknown `model_id` gives 404. */
export const MessageControls = Type.Object(
  {
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    model_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    reasoning_effort: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')])),
    response_format: Type.Optional(ref(ResponseFormat)),
    // Earlier public API (docs/decisions/0044-earlier-api-aliases.md).
    modelId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'camelCase alias of `model_id`; both given must agree.' }),
    ),
    locale: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }), Type.Null()], {
        description: 'BCP 47 tag, kept with the message.',
      }),
    ),
  },
  { $id: 'MessageControls', additionalProperties: false },
);

/** Most tags one message may carry; every event of its turn repeats them (spec 2.5). */
export const MAX_MESSAGE_TAGS = 20;

/** A message tag: no commas (tag filters are comma-separated) and no control characters. */
export const MessageTag = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^,\\u0000-\\u001f\\u007f]+$' });

export const InputMessage = Type.Object(
  {
    role: Type.Optional(Type.Literal('user')),
    tags: Type.Optional(Type.Array(MessageTag, { maxItems: MAX_MESSAGE_TAGS })),
    content: Type.Array(Type.Union([ref(TextInputPart), ref(ImageFileInputPart)]), {
      minItems: 1,
      maxItems: MAX_MESSAGE_PARTS,
    }),
    controls: Type.Optional(Type.Union([ref(MessageControls), Type.Null()])),
  },
  { $id: 'InputMessage', additionalProperties: false },
);

/** Most top-level keys of a message's `metadata`, and its largest JSON text in bytes. */
export const MAX_MESSAGE_METADATA_KEYS = 64;
export const MAX_MESSAGE_METADATA_BYTES = 16_384;

/**
 * POST /v1/sessions/{id}/messages. `controls` may also sit next to `message` (earlier clients),
 * and so may `tags` and `metadata` (the earlier public API's places for them).
 */
export const SubmitMessageBody = Type.Object(
  {
    message: ref(InputMessage),
    controls: Type.Optional(Type.Union([ref(MessageControls), Type.Null()])),
    tags: Type.Optional(
      Type.Union([Type.Array(MessageTag, { maxItems: MAX_MESSAGE_TAGS }), Type.Null()], { description: 'Added to `message.tags`.' }),
    ),
    metadata: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.Unknown(), { maxProperties: MAX_MESSAGE_METADATA_KEYS }), Type.Null()], {
        description: `Kept on the stored message as sent (at most ${MAX_MESSAGE_METADATA_BYTES} bytes of JSON).`,
      }),
    ),
    on_busy: Type.Optional(
      Type.Union([Type.Literal('reject'), Type.Literal('enqueue'), Type.Literal('interrupt')], {
        description:
          'While a turn runs: `reject` (default) answers 409; `enqueue` queues the message (202) to run after the turns before it; `interrupt` queues it first and cancels the running turn.',
      }),
    ),
  },
  { $id: 'SubmitMessageBody', additionalProperties: false },
);

/** A message sent with `on_busy` while a turn ran, waiting for its own (docs/decisions/0097-messages-while-busy.md). */
export const QueuedMessage = Type.Object(
  {
    id: Uuid,
    object: Type.Literal('queued_message'),
    session_id: Uuid,
    status: Type.Union([Type.Literal('queued'), Type.Literal('started'), Type.Literal('cancelled')]),
    position: Type.Integer({ minimum: 0, description: '1 runs next; 0 once it left the queue.' }),
    on_busy: Type.Union([Type.Literal('enqueue'), Type.Literal('interrupt')]),
    message: Type.Object({
      role: Type.Literal('user'),
      content: Type.Array(Type.Intersect([Type.Object({ type: Type.String() }), Type.Record(Type.String(), Type.Unknown())])),
      controls: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      tags: Type.Optional(Type.Array(Type.String())),
      metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
    turn_id: Type.Union([Type.String(), Type.Null()], { description: 'The turn it started, once it did.' }),
    created_at: Timestamp,
  },
  {
    $id: 'QueuedMessage',
    examples: [
      {
        id: '019a0000-0000-7000-8000-000000000031',
        object: 'queued_message',
        session_id: '019a0000-0000-7000-8000-0000000000e0',
        status: 'queued',
        position: 1,
        on_busy: 'enqueue',
        message: { role: 'user', content: [{ type: 'text', text: 'And in Tokyo?' }] },
        turn_id: null,
        created_at: '2026-11-29T12:00:00.000Z',
      },
    ],
  },
);

export const QueuedMessageList = ListOf(ref(QueuedMessage), 'QueuedMessageList');

export const QueuedMessageParams = Type.Object({ id: Uuid, queued_id: Uuid });

export const CancelTurnResponse = Type.Object(
  {
    status: Type.Union([Type.Literal('cancelled'), Type.Literal('no_op')]),
    message: Type.String(),
  },
  { $id: 'CancelTurnResponse' },
);

/** One client tool's outcome: `result` (any JSON) on success, `error` on failure. */
export const ClientToolResult = Type.Object(
  {
    tool_call_id: Type.String({ minLength: 1, maxLength: 256 }),
    result: Type.Optional(Type.Unknown()),
    error: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
  },
  { $id: 'ClientToolResult', additionalProperties: false },
);

export const SubmitToolResultsBody = Type.Object(
  { tool_results: Type.Array(ref(ClientToolResult), { minItems: 1, maxItems: 100 }) },
  { $id: 'SubmitToolResultsBody', additionalProperties: false },
);

export const SubmitToolResultsResponse = Type.Object(
  { accepted: Type.Integer({ minimum: 0 }), status: Type.Ref('SessionStatus') },
  { $id: 'SubmitToolResultsResponse' },
);

export type TextInputPartValue = Static<typeof TextInputPart>;
export type ImageFileInputPartValue = Static<typeof ImageFileInputPart>;
export type InputPart = TextInputPartValue | ImageFileInputPartValue;
export type MessageControlsInput = Static<typeof MessageControls>;
export type ResponseFormatInput = Static<typeof ResponseFormat>;
export type ClientToolResultInput = Static<typeof ClientToolResult>;

export const turnSchemas = [
  TextInputPart,
  ImageFileInputPart,
  ResponseFormat,
  MessageControls,
  InputMessage,
  SubmitMessageBody,
  QueuedMessage,
  QueuedMessageList,
  CancelTurnResponse,
  ClientToolResult,
  SubmitToolResultsBody,
  SubmitToolResultsResponse,
];
