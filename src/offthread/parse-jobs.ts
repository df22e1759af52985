/**
 * The jobs the parse pool runs off the event loop, and the one function that runs any of them
 * (in a worker, or inline where no pool is wired). Each parser here was measured to take
 * seconds on hostile input of a few KB to a few MB
 * (docs/decisions/0047-caller-documents-bounded.md), so none of them may run on the thread that serves HTTP.
 */
import { firstNonCompilingSchema } from './client-tool-schemas.js';
import { parseDefinition, type DefinitionFormat } from './definition-parse.js';
import { AppError } from '../errors.js';
import { convertHtml } from './html-conversion.js';
import { checkReply, replySchemaProblem, type ReplyCheck } from './reply-schemas.js';

export type ParseJobInput =
  | { kind: 'agent-definition'; raw: Uint8Array; contentType: string | undefined }
  | { kind: 'json-schemas'; schemas: Record<string, unknown>[] }
  | { kind: 'html'; html: string; format: 'markdown' | 'text' }
  | { kind: 'reply-schema'; schema: Record<string, unknown> }
  | { kind: 'structured-reply'; schema: Record<string, unknown>; text: string };

export interface ParseResults {
  'agent-definition': { format: DefinitionFormat; doc: Record<string, unknown> };
  /** Index of the first schema that does not compile, or -1. */
  'json-schemas': number;
  html: string;
  /** Why the schema does not compile, or null. */
  'reply-schema': string | null;
  'structured-reply': ReplyCheck;
}

export type ParseJobReply = { ok: true; value: unknown } | { ok: false; status: number; code: string; message: string };

/** Runs one job on the calling thread; AppErrors (4xx) are the caller's to show. */
export function runParseJob(job: ParseJobInput): ParseResults[ParseJobInput['kind']] {
  switch (job.kind) {
    case 'agent-definition':
      return parseDefinition(Buffer.from(job.raw.buffer, job.raw.byteOffset, job.raw.byteLength), job.contentType);
    case 'json-schemas':
      return firstNonCompilingSchema(job.schemas);
    case 'html':
      return convertHtml(job.html, job.format);
    case 'reply-schema':
      return replySchemaProblem(job.schema);
    case 'structured-reply':
      return checkReply(job.schema, job.text);
  }
}

/** A worker's answer to `job`: the value, or the AppError's status and message (else 500). */
export function replyTo(job: ParseJobInput): ParseJobReply {
  try {
    return { ok: true, value: runParseJob(job) };
  } catch (err) {
    if (err instanceof AppError && err.status < 500) return { ok: false, status: err.status, code: err.code, message: err.message };
    return { ok: false, status: 500, code: 'internal', message: err instanceof Error ? err.message : String(err) };
  }
}
