import { Type, type Static } from '@sinclair/typebox';
import { ListOf, Timestamp, Uuid } from './common.js';

/** A session file-system entry (reference `FileInfo`, plus `content_type` and `etag`). */
export const FileInfo = Type.Object(
  {
    id: Type.Union([Uuid, Type.Null()], { description: 'Null only for the workspace root.' }),
    session_id: Uuid,
    path: Type.String({ description: 'Normalised absolute path under the workspace root, e.g. /notes/plan.md.' }),
    name: Type.String(),
    is_directory: Type.Boolean(),
    is_readonly: Type.Boolean(),
    size_bytes: Type.Integer({ minimum: 0 }),
    content_type: Type.Union([Type.String(), Type.Null()]),
    etag: Type.Union([Type.String(), Type.Null()], { description: 'Quoted sha256 of the content; null for directories.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'FileInfo' },
);

export const FileList = ListOf(Type.Ref('FileInfo'), 'FileList');

const PathField = Type.String({ minLength: 1, maxLength: 1024, description: 'Path, with or without the /workspace prefix.' });

export const MoveFileBody = Type.Object(
  {
    src_path: PathField,
    dst_path: PathField,
    overwrite: Type.Optional(Type.Boolean({ description: 'Replace an existing destination (default false).' })),
  },
  { $id: 'MoveFileBody', additionalProperties: false },
);

export const CopyFileBody = Type.Object(
  {
    src_path: PathField,
    dst_path: PathField,
    overwrite: Type.Optional(Type.Boolean({ description: 'Replace an existing destination (default false).' })),
  },
  { $id: 'CopyFileBody', additionalProperties: false },
);

export const GrepBody = Type.Object(
  {
    pattern: Type.String({
      minLength: 1,
      maxLength: 1000,
      description:
        'Regular expression in RE2 syntax (no backreferences or lookaround; matching time is linear), matched per line on its first 16,384 characters (longer lines are returned cut there).',
    }),
    path_pattern: Type.Optional(
      Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], {
        description: 'Glob on file paths: * within a segment, ** across, e.g. **/*.md.',
      }),
    ),
    path: Type.Optional(Type.String({ maxLength: 1024, description: 'Only files under this directory (default /).' })),
    ignore_case: Type.Optional(Type.Boolean()),
  },
  { $id: 'GrepBody', additionalProperties: false },
);

export const GrepMatch = Type.Object(
  { path: Type.String(), line_number: Type.Integer({ minimum: 1 }), line: Type.String() },
  { $id: 'GrepMatch' },
);

export const GrepResults = Type.Object(
  {
    data: Type.Array(Type.Object({ path: Type.String(), matches: Type.Array(Type.Ref('GrepMatch')) })),
    total: Type.Integer({ minimum: 0, description: 'Files with matches.' }),
    truncated: Type.Boolean({ description: 'True when the match cap was reached.' }),
  },
  { $id: 'GrepResults' },
);

export const StatBody = Type.Object({ path: PathField }, { $id: 'StatBody', additionalProperties: false });

export const FsPathParams = Type.Object({ id: Uuid, path: Type.String() });
export const RecursiveQuery = Type.Object({ recursive: Type.Optional(Type.Boolean()) });

export type FileInfoView = Static<typeof FileInfo>;
export type MoveFileInput = Static<typeof MoveFileBody>;
export type GrepInput = Static<typeof GrepBody>;

/**
 * A starter file written into a new session's file system (earlier public API `InitialFile`):
 * session create, after the agent's. docs/decisions/0045-initial-files-and-agent-harness-id.md.
 */
export const InitialFile = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 1024, description: 'Absolute path; the `/workspace` prefix is accepted.' }),
    content: Type.String({ description: 'Plain text, or base64 with `encoding: "base64"`.' }),
    encoding: Type.Optional(Type.Union([Type.Literal('text'), Type.Literal('base64')], { default: 'text' })),
    is_readonly: Type.Optional(Type.Boolean({ description: 'Edits and deletes are refused (tools and REST) when true.' })),
  },
  { $id: 'InitialFile', additionalProperties: false },
);

/** At most this many starter files per session create (a later path replaces an earlier one). */
export const MAX_INITIAL_FILES = 100;

export type InitialFileInput = Static<typeof InitialFile>;

export const fsSchemas = [InitialFile, FileInfo, FileList, MoveFileBody, CopyFileBody, GrepBody, GrepMatch, GrepResults, StatBody];
