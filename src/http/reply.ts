import type { Static, TSchema } from '@sinclair/typebox';
import type { SseStream } from './sse-stream.js';

/** A media type that describes a non-JSON reply body, e.g. `text/markdown`. */
export type MediaType = string;

/** The media type of SSE routes: their reply opens a stream instead of carrying a body. */
export type EventStreamMedia = 'text/event-stream';

/**
 * A status whose 200 may be JSON (`json`) or bytes of another media type (`raw`), e.g. a
 * directory or a file; with `raw: 'text/event-stream'`, JSON or a stream (an MCP answer).
 */
export interface JsonOrRaw {
  readonly json: TSchema;
  readonly raw: MediaType;
}

/** One status's reply description: a JSON schema, a media type, either of both, or `null` for no body. */
export type ResponseSchema = TSchema | MediaType | JsonOrRaw | null;

export type ResponseSchemas = { readonly [status: number]: ResponseSchema };

type Headers = Record<string, string>;

export interface JsonReply<S extends number, T> {
  status: S;
  body: T;
  headers?: Headers;
}

export interface EmptyReply<S extends number> {
  status: S;
  headers?: Headers;
  /** A status declared without a body may not carry one. */
  body?: never;
}

export interface RawReply<S extends number> {
  status: S;
  raw: Buffer | string;
  contentType: string;
  headers?: Headers;
}

/** `abandon` runs instead of `sse` when the client left before the stream opened. */
export interface SseReply {
  sse: (stream: SseStream) => void;
  abandon?: () => void;
  /**
   * `false`: the stream is never cycled (SSE_CYCLE_MS): it carries one answer its client cannot
   * resume, as an MCP call's does, and ends when the handler ends it. Default: cycled.
   */
  cycle?: false;
}

/** Carries the value a JSON reply's bytes encode, so an encoded reply is typed like a `body` one. */
export const encodedFrom = Symbol('encodedFrom');

/** A JSON reply serialised ahead of time (src/http/aliased-list.ts); `[encodedFrom]` is its value. */
export interface EncodedJsonReply<S extends number, T> extends RawReply<S> {
  contentType: 'application/json';
  readonly [encodedFrom]: T;
}

/** What the transport writes: any reply of any route, its body type forgotten. */
export type Reply = { status: number; body?: unknown; headers?: Headers } | RawReply<number> | SseReply;

type ReplyFor<S extends number, R> = R extends null
  ? EmptyReply<S>
  : R extends EventStreamMedia
    ? SseReply
    : R extends MediaType
      ? RawReply<S>
      : R extends JsonOrRaw
        ? JsonReply<S, Static<R['json']>> | EncodedJsonReply<S, Static<R['json']>> | RawReply<S> | StreamOf<R['raw']>
        : R extends TSchema
          ? JsonReply<S, Static<R>> | EncodedJsonReply<S, Static<R>>
          : never;

type StreamOf<M> = M extends EventStreamMedia ? SseReply : never;

/** The replies a route may give: for each declared status, a reply shaped by that status's schema. */
export type ReplyOf<R extends ResponseSchemas> = { [S in keyof R & number]: ReplyFor<S, R[S]> }[keyof R & number];

/** A JSON reply whose bytes were serialised ahead of time (e.g. from a cache); `value` is what they encode. */
export function encodedJsonReply<S extends number, T>(status: S, raw: Buffer | string, value: T): EncodedJsonReply<S, T> {
  return { status, raw, contentType: 'application/json', [encodedFrom]: value };
}

/** The JSON schema a status's replies are checked against, if any (media types are not checked). */
export function jsonSchemaOf(schema: ResponseSchema): TSchema | null {
  if (schema === null || typeof schema === 'string') return null;
  return isJsonOrRaw(schema) ? schema.json : schema;
}

export function isJsonOrRaw(schema: ResponseSchema): schema is JsonOrRaw {
  return schema !== null && typeof schema === 'object' && 'json' in schema && 'raw' in schema;
}
