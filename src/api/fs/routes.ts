import { ErrorResponse, IdParams, ref } from '../../../schemas/common.js';
import {
  CopyFileBody,
  FileInfo,
  FileList,
  FsPathParams,
  GrepBody,
  GrepResults,
  MoveFileBody,
  RecursiveQuery,
  StatBody,
} from '../../../schemas/fs.js';
import type { ReplyOf } from '../../http/index.js';
import { route, type Route } from '../../http/index.js';
import { storedContentHeaders } from '../../http/index.js';
import { MAX_FILE_SIZE_LIMIT_BYTES, type FileRead, type FsService } from './service.js';

const tags = ['filesystem'];
const err = ref(ErrorResponse);
/** A file's bytes, or the listing when the path is a directory. */
const FILE_OR_LISTING = { json: ref(FileList), raw: 'application/octet-stream' } as const;

/**
 * The session file system (spec 4.2, architecture guide 6). The `POST fs/_/{move,copy,grep,stat}`
 * operations have more static segments than `fs/*path`, so the router tries them first: those
 * four paths are operations, never uploads (GET and DELETE of them still reach files).
 */
export function fsRoutes({ fs, fsQuotaBytes }: { fs: FsService; fsQuotaBytes: number }): Route[] {
  // Bodies above the per-file cap's upper bound (or the quota, when smaller) are 413 before parsing.
  const maxUploadBytes = Math.min(fsQuotaBytes, MAX_FILE_SIZE_LIMIT_BYTES);
  return [
    route(
      {
        method: 'GET',
        path: '/v1/sessions/:id/fs',
        auth: 'user',
        summary: 'List the workspace root (?recursive for all entries)',
        tags,
        schema: { params: IdParams, query: RecursiveQuery, response: { 200: ref(FileList), 404: err } },
      },
      async ({ params, query }, { principal }) => {
        return { status: 200, body: await fs.list(principal, params.id, query.recursive === true) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/fs/_/move',
        auth: 'user',
        summary: 'Move or rename a file or directory',
        tags,
        schema: {
          params: IdParams,
          body: ref(MoveFileBody),
          response: { 200: ref(FileInfo), 403: err, 404: err, 409: err, 422: err },
        },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await fs.move(principal, params.id, body) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/fs/_/copy',
        auth: 'user',
        summary: 'Copy a file or directory tree',
        tags,
        schema: {
          params: IdParams,
          body: ref(CopyFileBody),
          response: { 201: ref(FileInfo), 403: err, 404: err, 409: err, 413: err, 422: err },
        },
      },
      async ({ params, body }, { principal }) => {
        return { status: 201, body: await fs.copy(principal, params.id, body) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/fs/_/grep',
        auth: 'user',
        summary: 'Search text files line by line with a regular expression',
        tags,
        schema: { params: IdParams, body: ref(GrepBody), response: { 200: ref(GrepResults), 404: err } },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await fs.grep(principal, params.id, body) };
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/fs/_/stat',
        auth: 'user',
        summary: 'Metadata of a file or directory',
        tags,
        schema: { params: IdParams, body: ref(StatBody), response: { 200: ref(FileInfo), 404: err } },
      },
      async ({ params, body }, { principal }) => {
        return { status: 200, body: await fs.stat(principal, params.id, body.path) };
      },
    ),
    route(
      {
        method: 'GET',
        path: '/v1/sessions/:id/fs/*path',
        auth: 'user',
        summary: 'Read a file (raw bytes, ETag) or list a directory',
        tags,
        schema: { params: FsPathParams, query: RecursiveQuery, response: { 200: FILE_OR_LISTING, 304: null, 404: err } },
      },
      async ({ params, query, headers }, { principal }) => {
        return fileReply(await fs.read(principal, params.id, params.path, query.recursive === true), headers['if-none-match']);
      },
    ),
    route(
      {
        method: 'POST',
        path: '/v1/sessions/:id/fs/*path',
        auth: 'user',
        summary: 'Create or overwrite a file from the raw body; parents are created',
        tags,
        bodyKind: 'raw',
        maxBodyBytes: maxUploadBytes,
        schema: {
          params: FsPathParams,
          response: { 200: ref(FileInfo), 201: ref(FileInfo), 403: err, 404: err, 409: err, 413: err },
        },
      },
      async ({ params, rawBody, headers }, { principal }) => {
        const { record, created } = await fs.write(principal, params.id, params.path, rawBody, headers['content-type']);
        return created ? { status: 201, body: record } : { status: 200, body: record };
      },
    ),
    route(
      {
        method: 'DELETE',
        path: '/v1/sessions/:id/fs/*path',
        auth: 'user',
        summary: 'Delete a file, or a directory with ?recursive',
        tags,
        schema: { params: FsPathParams, query: RecursiveQuery, response: { 204: null, 403: err, 404: err, 409: err } },
      },
      async ({ params, query }, { principal }) => {
        await fs.remove(principal, params.id, params.path, query.recursive === true);
        return { status: 204 };
      },
    ),
  ];
}

/**
 * Raw bytes with the stored type, ETag and the stored-content headers (a stored page never runs
 * on the API's origin); 304 when If-None-Match already names that ETag.
 */
function fileReply(read: FileRead, ifNoneMatch: string | undefined): ReplyOf<{ 200: typeof FILE_OR_LISTING; 304: null }> {
  if (read.kind === 'directory') return { status: 200, body: { data: read.entries, total: read.entries.length } };
  const etag = read.record.etag!;
  const headers = { ETag: etag, 'Cache-Control': 'no-cache' };
  if (ifNoneMatch && matchesEtag(ifNoneMatch, etag)) return { status: 304, headers };
  const contentType = read.record.content_type ?? 'application/octet-stream';
  const fileName = read.record.path.slice(read.record.path.lastIndexOf('/') + 1);
  return { status: 200, raw: read.content, contentType, headers: { ...headers, ...storedContentHeaders(contentType, fileName) } };
}

/** `If-None-Match`: `*` or a list of (possibly weak) entity tags. */
function matchesEtag(header: string, etag: string): boolean {
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}
