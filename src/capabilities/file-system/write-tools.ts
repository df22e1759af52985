import { Type } from '@sinclair/typebox';
import { defineTool, jsonResult } from '../define.js';
import { ToolError, type CapabilityConfig } from '../types.js';
import { maxFileSizeBytes } from './config.js';
import { normalizeEntryPath } from './paths.js';
import { mustStat } from './read-tools.js';
import { countOccurrences, decodeText } from './text.js';

const PathArg = Type.String({ minLength: 1, description: 'Absolute path, e.g. /notes/plan.md (/workspace/notes/plan.md also works).' });
const encoder = new TextEncoder();

export const writeFile = defineTool({
  name: 'write_file',
  display_name: 'Write File',
  description: 'Creates or overwrites a UTF-8 text file with the given content. Missing parent directories are created.',
  parameters: Type.Object(
    { path: PathArg, content: Type.String({ description: 'The complete file content.' }) },
    { additionalProperties: false },
  ),
  async run(args, { fs, config }) {
    const path = normalizeEntryPath(args.path);
    const bytes = encodeWithinLimit(args.content, config);
    const { stat, created } = await fs.write(path, bytes);
    return jsonResult({ path: stat.path, size_bytes: stat.size_bytes, created });
  },
});

export const editFile = defineTool({
  name: 'edit_file',
  display_name: 'Edit File',
  description:
    'Replaces an exact string in a text file. old_string must match exactly (whitespace included) and occur once, unless replace_all is true. Read the file first.',
  parameters: Type.Object(
    {
      path: PathArg,
      old_string: Type.String({ minLength: 1, description: 'The exact text to replace, with enough context to be unique.' }),
      new_string: Type.String({ description: 'The replacement text.' }),
      replace_all: Type.Optional(Type.Boolean({ description: 'Replace every occurrence. Default false.' })),
    },
    { additionalProperties: false },
  ),
  async run(args, { fs, config }) {
    const path = normalizeEntryPath(args.path);
    if (args.old_string === args.new_string) throw new ToolError('old_string and new_string are identical; nothing to change.');
    const { content } = await fs.read(path);
    const text = decodeText(content);
    if (text === null) throw new ToolError(`${path} is a binary file; edit_file works on text files only.`);
    const count = countOccurrences(text, args.old_string);
    if (count === 0) throw new ToolError(`old_string was not found in ${path}. Read the file and copy the text exactly.`);
    if (count > 1 && args.replace_all !== true) {
      throw new ToolError(`old_string occurs ${count} times in ${path}. Add surrounding context to make it unique, or set replace_all.`);
    }
    const next = text.split(args.old_string).join(args.new_string);
    const { stat } = await fs.write(path, encodeWithinLimit(next, config));
    return jsonResult({ path: stat.path, replacements: count, size_bytes: stat.size_bytes });
  },
});

export const deleteFile = defineTool({
  name: 'delete_file',
  display_name: 'Delete File',
  description: 'Deletes a file, or a directory with recursive: true.',
  parameters: Type.Object(
    { path: PathArg, recursive: Type.Optional(Type.Boolean({ description: 'Needed to delete a non-empty directory. Default false.' })) },
    { additionalProperties: false },
  ),
  async run(args, { fs }) {
    const path = normalizeEntryPath(args.path);
    const stat = await mustStat(fs, path);
    await fs.delete(path, { recursive: args.recursive === true });
    return jsonResult({ path, deleted: true, was_directory: stat.is_directory });
  },
});

const TransferArgs = Type.Object(
  {
    src_path: Type.String({ minLength: 1, description: 'Source path.' }),
    dst_path: Type.String({ minLength: 1, description: 'Destination path.' }),
    overwrite: Type.Optional(Type.Boolean({ description: 'Replace an existing destination. Default false.' })),
  },
  { additionalProperties: false },
);

export const moveFile = defineTool({
  name: 'move_file',
  display_name: 'Move File',
  description: 'Moves or renames a file or directory.',
  parameters: TransferArgs,
  async run(args, { fs }) {
    const [src, dst] = transferPaths(args.src_path, args.dst_path);
    await mustStat(fs, src);
    const stat = await fs.move(src, dst, { overwrite: args.overwrite === true });
    return jsonResult({ src_path: src, dst_path: stat.path, stat });
  },
});

export const copyFile = defineTool({
  name: 'copy_file',
  display_name: 'Copy File',
  description: 'Copies a file or directory tree.',
  parameters: TransferArgs,
  async run(args, { fs }) {
    const [src, dst] = transferPaths(args.src_path, args.dst_path);
    await mustStat(fs, src);
    const stat = await fs.copy(src, dst, { overwrite: args.overwrite === true });
    return jsonResult({ src_path: src, dst_path: stat.path, stat });
  },
});

function transferPaths(srcInput: string, dstInput: string): [string, string] {
  const src = normalizeEntryPath(srcInput);
  const dst = normalizeEntryPath(dstInput);
  if (src === dst) throw new ToolError('src_path and dst_path are the same.');
  if (dst.startsWith(src + '/')) throw new ToolError('Cannot move or copy a directory into itself.');
  return [src, dst];
}

function encodeWithinLimit(text: string, config: CapabilityConfig): Uint8Array {
  const bytes = encoder.encode(text);
  const max = maxFileSizeBytes(config);
  if (bytes.length > max) throw new ToolError(`Content is ${bytes.length} bytes; the maximum file size is ${max} bytes.`);
  return bytes;
}
