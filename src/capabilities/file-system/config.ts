import { Type } from '@sinclair/typebox';
import type { CapabilityConfig } from '../types.js';

const MIB = 1024 * 1024;
/** Default largest file the tools write: 10 MiB. */
export const DEFAULT_MAX_FILE_SIZE_BYTES = 10 * MIB;
/** Upper bound of the setting: the spec's practical per-session limit, 100 MB. */
export const MAX_FILE_SIZE_LIMIT_BYTES = 100 * MIB;

export const FileSystemConfig = Type.Object(
  {
    max_file_size_mb: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 100, description: 'Largest file the tools write, in MiB (default 10).' }),
    ),
    max_file_size: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_FILE_SIZE_LIMIT_BYTES, description: 'Largest file the tools write, in bytes.' }),
    ),
  },
  { additionalProperties: false },
);

/** The effective file size cap in bytes; when both keys are set the smaller wins. */
export function maxFileSizeBytes(config: CapabilityConfig): number {
  const caps: number[] = [];
  const mb = config['max_file_size_mb'];
  const bytes = config['max_file_size'];
  if (typeof mb === 'number' && mb > 0) caps.push(Math.floor(mb * MIB));
  if (typeof bytes === 'number' && bytes > 0) caps.push(Math.floor(bytes));
  return caps.length === 0 ? DEFAULT_MAX_FILE_SIZE_BYTES : Math.min(MAX_FILE_SIZE_LIMIT_BYTES, ...caps);
}
