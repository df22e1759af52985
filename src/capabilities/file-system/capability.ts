import { defineCapability } from '../define.js';
import { FileSystemConfig } from './config.js';
import { grepFiles, listDirectory, readFile, statFile } from './read-tools.js';
import { copyFile, deleteFile, editFile, moveFile, writeFile } from './write-tools.js';

export const SESSION_FILE_SYSTEM_ID = 'session_file_system';

export const sessionFileSystemCapability = defineCapability({
  id: SESSION_FILE_SYSTEM_ID,
  name: 'File System',
  description:
    'A persistent virtual file system for the session, rooted at /workspace: read, write, edit, list, search, move, copy and delete files.',
  prompt: [
    'This session has a persistent virtual file system rooted at /workspace (paths like /workspace/notes/plan.md and /notes/plan.md are the same file).',
    'Use it to keep work products, notes and data across turns.',
    'Read a file before editing it; prefer `edit_file` (exact, unique replacement) over rewriting a whole file with `write_file`.',
    'Use `list_directory` and `grep_files` to find files instead of guessing paths. Some files may be read-only.',
  ].join(' '),
  tools: [readFile, writeFile, editFile, listDirectory, grepFiles, deleteFile, statFile, moveFile, copyFile],
  configSchema: FileSystemConfig,
  features: ['file_system'],
});
